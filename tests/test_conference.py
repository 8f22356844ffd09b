"""The bundled conference file: the .jsonl.gz reader, seeds/ defaults, what is indexed."""

from __future__ import annotations

import gzip
import json

import pytest

from rag.errors import CorpusError
from rag.ingest.catalog import describe_indexed
from rag.ingest.corpus import expand_paths, read_file
from rag.settings import CONFERENCE_FILE, SEEDS_DIR


def test_bundle_reads_every_field(conference_papers):
    assert len(conference_papers) == 11672
    assert len({p.paper_id for p in conference_papers}) == 11672
    p = conference_papers[0]
    assert p.title and p.decision and p.authors and p.primary_area and p.url
    assert p.source_file == "iclr2025.jsonl.gz"
    first = json.loads(gzip.decompress(CONFERENCE_FILE.read_bytes()).split(b"\n", 1)[0])
    assert set(first) == {
        "id",
        "title",
        "abstract",
        "status",
        "decision",
        "authors",
        "status_match",
        "primary_area",
        "url",
    }


def test_seed_default_skips_the_bundle():
    files = expand_paths([SEEDS_DIR])
    assert all(f.suffix == ".txt" for f in files) and len(files) == 2


def test_jsonl_gz_same_validation(tmp_path):
    good = tmp_path / "c.jsonl.gz"
    good.write_bytes(gzip.compress(b'{"id": "a1", "title": "T", "abstract": "Text here."}\n'))
    assert [p.paper_id for p in read_file(good)] == ["a1"]
    bad = tmp_path / "bad.jsonl.gz"
    bad.write_bytes(gzip.compress(b'{"id": "a1", "abstract": "x"}\nnot json\n'))
    with pytest.raises(CorpusError, match=r"bad.jsonl.gz:2: not valid JSON"):
        read_file(bad)


@pytest.mark.parametrize("data", [b"not gzip at all", gzip.compress(b'{"id": 1}\n')[:-12]])
def test_corrupt_gzip_is_a_clear_error(tmp_path, data):
    f = tmp_path / "x.jsonl.gz"
    f.write_bytes(data)
    with pytest.raises(CorpusError, match="not a readable gzip file"):
        read_file(f)


def test_describe_indexed(seed_papers, conference_papers):
    assert describe_indexed({p.paper_id: p for p in seed_papers}) == "38 seed abstracts"
    assert describe_indexed({p.paper_id: p for p in conference_papers}) == "11,672 ICLR 2025 submissions"
    some = {p.paper_id: p for p in conference_papers[:1500]}
    assert describe_indexed(some) == "1,500 abstracts"
    assert describe_indexed({}) == "nothing indexed"
