"""eval/metrics.py: gold resolution, retrieval ranks, citations, facts, abstentions and percentiles
on hand-made papers."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from eval import metrics as M
from tests.conftest import P

ROOT = Path(__file__).resolve().parents[1]
ID_MAP = {("a.txt", 0): "ID0", ("a.txt", 1): "ID1", ("b.txt", 3): "ID3"}


# ------------------------------------------------------------------ gold resolution


def test_gold_by_file_index_resolves_to_id_and_matches_full_corpus_paper():
    g = M.gold_keys({"file": "a.txt", "index": 1}, ID_MAP)
    assert g == {"fi:a.txt#1", "id:ID1"}
    # the same paper in the full corpus: other file, other index, same OpenReview id
    assert M.match_gold(P("ID1", "iclr2025.jsonl", 4711), [g]) == 0
    # the seed paper itself, matched by (file, index) even without an id
    assert M.match_gold({"paper_id": "a#1", "source_file": "a.txt", "index": 1}, [g]) == 0
    assert M.match_gold(P("ID0", "a.txt", 0), [g]) is None


def test_gold_by_id_and_unresolvable_gold():
    assert M.gold_keys({"id": "XYZ"}) == {"id:XYZ"}
    assert M.gold_keys({"file": "zzz.txt", "index": 0}, ID_MAP) == {"fi:zzz.txt#0"}
    with pytest.raises(ValueError):
        M.gold_keys({"title": "no key"})


def test_load_id_map_reads_seed_metadata():
    m = M.load_id_map(ROOT / "seeds" / "metadata.jsonl")
    assert len(m) == 38 and all(isinstance(v, str) and v for v in m.values())


# ------------------------------------------------------------------ retrieval


def test_ranks_hit_mrr_ndcg_single_gold():
    gold = [M.gold_keys({"id": "G"})]
    ranked = [P("a"), P("b"), P("G"), P("c")]
    ranks = M.gold_ranks(ranked, gold)
    assert ranks == [3]
    assert M.hit_at_k(ranks, 1) == 0.0 and M.hit_at_k(ranks, 3) == 1.0 and M.hit_at_k(ranks, 5) == 1.0
    assert M.reciprocal_rank(ranks) == pytest.approx(1 / 3)
    assert M.ndcg_at_k(ranks, 10) == pytest.approx(1 / math.log2(4))
    assert M.ndcg_at_k(ranks, 2) == 0.0


def test_multi_gold_recall_ndcg_and_absent():
    gold = [M.gold_keys({"id": "G1"}), M.gold_keys({"id": "G2"}), M.gold_keys({"id": "G3"})]
    ranked = [P("G2"), P("x"), P("G1"), P("G2")]  # duplicate G2 counts once
    ranks = M.gold_ranks(ranked, gold)
    assert ranks == [3, 1, None]
    assert M.hit_at_k(ranks, 1) == 1.0
    assert M.recall_at_k(ranks, 1) == pytest.approx(1 / 3)
    assert M.recall_at_k(ranks, 5) == pytest.approx(2 / 3)
    assert M.reciprocal_rank(ranks) == 1.0
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert M.ndcg_at_k(ranks, 10) == pytest.approx((1 + 1 / math.log2(4)) / idcg)
    assert M.ndcg_at_k([1, 2], 10) == pytest.approx(1.0)
    assert M.reciprocal_rank([None]) == 0.0 and M.hit_at_k([None], 20) == 0.0


# ------------------------------------------------------------------ citations, facts, refusal


def test_citation_precision_recall():
    gold = [M.gold_keys({"id": "G1"}), M.gold_keys({"id": "G2"})]
    cited = [P("G1"), P("x"), P("G1")]  # the same paper cited twice counts once
    assert M.citation_precision(cited, gold) == pytest.approx(1 / 2)
    assert M.citation_recall(cited, gold) == pytest.approx(1 / 2)
    assert M.citation_precision([], gold) is None
    assert M.citation_recall([], gold) == 0.0
    assert M.citation_recall(cited, []) is None


def test_content_tokens_rules():
    assert M.content_tokens("The 135 distinct, chaotic systems!") == ["135", "distinct", "chaotic", "systems"]
    assert M.content_tokens("d^{1/3}ε^{-2/3}") == ["1", "3", "ε", "2", "3"]  # 'd' is an NLTK stopword
    assert M.content_tokens("of the and") == []


def test_fact_recall_70_percent_rule():
    # "ScanNet V2 (+5.3)" -> scannet v2 5 3 : 4 tokens
    fact = "ScanNet V2 (+5.3)"
    assert M.fact_found(fact, "DEST gains +5.3 AP50 on ScanNet V2 [1].")
    assert M.fact_found(fact, "On ScanNet V2 it gains 5 points.")  # 3/4 = 0.75 >= 0.7
    assert not M.fact_found(fact, "On ScanNet it gains 5.")  # 2/4 = 0.5
    # 10 tokens: 7 present counts, 6 does not
    fact10 = "alpha beta gamma delta epsilon zeta eta theta iota kappa"
    assert M.fact_found(fact10, "alpha beta gamma delta epsilon zeta eta")
    assert not M.fact_found(fact10, "alpha beta gamma delta epsilon zeta")
    # stopwords don't count, punctuation and case are ignored
    assert M.fact_found("The Law of the Weakest Link", "a law: weakest-link")
    # citation markers are not numbers of the answer
    assert not M.fact_found("135 systems", "It tests systems [135].")
    assert (
        M.fact_recall(
            ["135 distinct chaotic dynamical systems", "10^8 timepoints"],
            "They use 135 distinct chaotic dynamical systems [1].",
        )
        == 0.5
    )
    assert M.fact_recall([], "anything") is None


def test_supported_share_and_abstain_detection():
    sents = [{"supported": True}, {"supported": False}, {"supported": True}, {"supported": True}]
    assert M.supported_share(sents) == 0.75
    assert M.supported_share(sents, fallback=True) == 0.0
    assert M.supported_share([]) is None
    assert M.abstains("The indexed abstracts don't answer this question.")
    assert M.abstains("The abstracts do not mention the number of GPU hours.")
    assert M.abstains("This information is not provided in the abstracts [1].")
    assert not M.abstains("DEST improves AP50 by 5.3 on ScanNet V2 [1].")


def test_percentile():
    assert M.percentile([], 50) is None
    assert M.percentile([3.0], 95) == 3.0
    assert M.percentile([1, 2, 3, 4], 50) == 2.5
    assert M.percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
