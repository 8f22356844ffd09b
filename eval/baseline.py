"""The comparison baseline: llama-index's default `VectorStoreIndex(...).as_query_engine()`.

Same embedder (llama-index `HuggingFaceEmbedding` over the packaged MiniLM folder) and the same LLM
object (wrapped in `HuggingFaceLLM`), everything passed explicitly: llama-index's global `Settings.llm`
/ `Settings.embed_model` are never set and never resolved (`global_settings_untouched()` checks).
Defaults otherwise: one Document per abstract (title as metadata), default SentenceSplitter, in-memory
SimpleVectorStore, similarity_top_k=2, response_mode="compact". It has no chat memory, so a follow-up
is sent as the earlier user turns followed by the question.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

from eval import metrics as M


def global_settings_untouched() -> bool:
    from llama_index.core import Settings as LISettings

    return LISettings._llm is None and LISettings._embed_model is None


def _key(papers) -> str:
    h = hashlib.sha256()
    for p in papers:
        h.update(f"{p.paper_id}|{p.title}|{hashlib.sha1(p.text.encode()).hexdigest()};".encode())
    return h.hexdigest()[:12]


class Baseline:
    def __init__(
        self, settings, papers, out: Path, engine=None, generate: bool = True, progress: bool = True, llm=None
    ):
        from llama_index.core import Document, StorageContext, VectorStoreIndex, load_index_from_storage
        from llama_index.core.node_parser import SentenceSplitter
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding

        from rag.models.embedder import embedder_path
        from rag.models.generator import load_llm

        self.settings = settings
        self.engine = engine
        self.papers = {p.paper_id: p for p in papers}
        t0 = time.perf_counter()
        self.embed = HuggingFaceEmbedding(model_name=str(embedder_path()), device="cpu")
        cache = Path(out) / f"baseline-{_key(papers)}"
        if (cache / "docstore.json").exists():
            ctx = StorageContext.from_defaults(persist_dir=str(cache))
            self.index = load_index_from_storage(ctx, embed_model=self.embed)
        else:
            docs = [
                Document(
                    text=p.text,
                    id_=p.paper_id,
                    metadata={"title": p.title or p.label, "paper_id": p.paper_id},
                    excluded_embed_metadata_keys=["paper_id"],
                    excluded_llm_metadata_keys=["paper_id"],
                )
                for p in papers
            ]
            self.index = VectorStoreIndex.from_documents(
                docs, embed_model=self.embed, transformations=[SentenceSplitter()], show_progress=progress
            )
            self.index.storage_context.persist(persist_dir=str(cache))
        self.build_s = time.perf_counter() - t0
        self.query_engine = None
        if generate:
            from llama_index.llms.huggingface import HuggingFaceLLM

            ours = llm or (engine.llm if engine is not None else load_llm(settings.generation.llm, settings))
            tok = ours.tokenizer
            self.hf_llm = HuggingFaceLLM(
                model=ours.model,
                tokenizer=tok,
                device_map="cpu",
                is_chat_model=True,
                max_new_tokens=settings.generation.max_new_tokens,
                context_window=4096,
                generate_kwargs={
                    "do_sample": False,
                    "repetition_penalty": 1.05,
                    "pad_token_id": tok.pad_token_id or tok.eos_token_id,
                },
            )
            self.query_engine = self.index.as_query_engine(llm=self.hf_llm)
        assert global_settings_untouched(), "baseline resolved llama-index global Settings"

    def describe(self) -> str:
        return (
            "llama-index VectorStoreIndex.as_query_engine() defaults (SentenceSplitter 1024/200, "
            "similarity_top_k=2, compact synthesis), same MiniLM embedder and same LLM; "
            f"index built/loaded in {self.build_s:.1f} s; global Settings untouched: {global_settings_untouched()}"
        )

    def query(self, text: str):
        """query_engine.query in a worker thread, as the engine generates (LLM.stream): on a loaded
        machine torch ops in the main thread can run ~10x slower (OpenMP spin-waiting), which would
        make the comparison about threads, not pipelines."""
        got: dict = {}

        def run():
            try:
                got["r"] = self.query_engine.query(text)
            except BaseException as e:  # re-raised in the caller
                got["e"] = e

        th = threading.Thread(target=run, daemon=True)
        th.start()
        th.join()
        if "e" in got:
            raise got["e"]
        return got["r"]

    def _paper(self, node) -> dict | None:
        pid = node.metadata.get("paper_id") or getattr(node, "ref_doc_id", None)
        p = self.papers.get(pid)
        if p is None:
            return None
        return {"paper_id": p.paper_id, "source_file": p.source_file, "index": p.index, "title": p.title}

    def rank(self, query: str, depth: int) -> list[dict]:
        out, seen = [], set()
        for nws in self.index.as_retriever(similarity_top_k=depth * 2).retrieve(query):
            d = self._paper(nws.node)
            if d and d["paper_id"] not in seen:
                seen.add(d["paper_id"])
                d["score"] = round(float(nws.score or 0.0), 6)
                out.append(d)
        return out[:depth]

    def row(self, q: dict, gold, depth: int) -> dict:
        from eval.rows import base_row

        query = " ".join([*[h for h in q.get("history", []) if str(h).strip()], q["question"]])
        row = base_row(q, "baseline", gold, "answer")
        row.update(mode="baseline", standalone=query)
        t0 = time.perf_counter()
        row["ranked"] = self.rank(query, depth)
        ret_s = time.perf_counter() - t0
        if self.query_engine is None:
            row.update(
                generated=False,
                refused=False,
                timings={"retrieve_s": round(ret_s, 4)},
                retrieved=row["ranked"][:2],
            )
            return row
        t0 = time.perf_counter()
        resp = self.query(query)
        total = time.perf_counter() - t0
        text = str(resp.response or "").strip()
        cited, hits = [], []
        for nws in resp.source_nodes:
            d = self._paper(nws.node)
            if d and d["paper_id"] not in {c["paper_id"] for c in cited}:
                cited.append(d | {"n": len(cited) + 1, "quote": None})
                hits.append(self.papers[d["paper_id"]])
        row.update(
            generated=True,
            answer=text,
            refused=False,
            abstained=M.abstains(text),
            fallback=False,
            retrieved=[{k: v for k, v in c.items() if k not in ("n", "quote")} for c in cited],
            cited=cited,
            timings={"total_s": round(total, 4), "retrieve_s": round(ret_s, 4)},
        )
        row["sentences"] = self._judge(text, hits)
        return row

    def _judge(self, text: str, papers) -> list[dict] | None:
        """The engine's support judge over the baseline answer (same threshold), for supported_rate."""
        if self.engine is None or not text:
            return None
        from rag.grounding.cite import bind
        from rag.types import Hit

        _, sents, _ = bind(
            text, [Hit(p, 0.0) for p in papers], self.engine.judge, self.settings.grounding.support_threshold
        )
        return [
            {
                "text": s.text,
                "citations": s.citations,
                "supported": s.supported,
                "support_score": s.support_score,
            }
            for s in sents
        ]
