"""The engine, the generator and the embedder have one written contract each (rag.types), and the real
classes and the tests' fakes both keep it."""

from __future__ import annotations

from rag.types import AnswerEngine, Embedder, Generator


def test_the_engine_and_the_ui_fake_keep_the_engine_contract(seed_engine):
    from tests.ui_support import FakeEngine

    assert isinstance(seed_engine, AnswerEngine)
    assert isinstance(FakeEngine(token_delay=0), AnswerEngine)


def test_generators_and_embedders_keep_theirs(fake_llm, fake_embedder, embedder):
    from eval.gate import CopyingLLM
    from rag.models.generator import LLM

    assert isinstance(fake_llm, Generator) and isinstance(CopyingLLM(), Generator)
    assert all(hasattr(LLM, m) for m in ("stream", "generate")) and "name" in LLM.__annotations__
    assert isinstance(fake_embedder, Embedder) and isinstance(embedder, Embedder)


def test_a_missing_method_breaks_the_contract():
    class Half:
        settings = None

        def stream(self, question, history=None, **kw):
            return iter(())

    assert not isinstance(Half(), AnswerEngine)
