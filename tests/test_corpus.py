import json

import pytest

from rag.errors import CorpusError
from rag.ingest.corpus import expand_paths, read_file


def test_seed_files_parse_with_metadata(seed_papers):
    assert len(seed_papers) == 38
    by_key = {(p.source_file, p.index): p for p in seed_papers}
    cel = by_key[("000_e01d3feec203c69d.txt", 1)]
    assert cel.paper_id == "Tqdsruwyac"
    assert "Celcomen" in cel.text
    assert cel.title.startswith("Estimation of single-cell")
    assert cel.decision == "Accept (Poster)"
    assert {p.index for p in seed_papers if p.source_file == cel.source_file} == set(range(19))


def test_header_blank_lines_and_crlf(tmp_path):
    f = tmp_path / "c.txt"
    f.write_bytes(
        b"My header\r\n\r\nFirst abstract.\r\nSame abstract line two.\r\n\r\n\r\n  \r\nSecond abstract.\r\n"
    )
    papers = read_file(f)
    assert [p.text for p in papers] == ["First abstract.\nSame abstract line two.", "Second abstract."]
    # no metadata beside it: stem, place and a hash of the abstract (issue 39: one basename, two folders)
    assert [p.paper_id.split("-")[0] for p in papers] == ["c#0", "c#1"]
    assert [p.index for p in papers] == [0, 1]
    assert papers[0].title is None and papers[0].label == "c.txt #0"


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "empty"),
        (b"   \n\n", "empty"),
        (b"Only a header\n\n\n", "no abstracts"),
        (b"header\n\nabstract \xff\xfe bad", "not UTF-8"),
    ],
)
def test_bad_txt_files(tmp_path, content, message):
    f = tmp_path / "bad.txt"
    f.write_bytes(content)
    with pytest.raises(CorpusError) as e:
        read_file(f)
    assert str(f) in str(e.value) and message in str(e.value)


def test_missing_file(tmp_path):
    with pytest.raises(CorpusError, match="not found"):
        read_file(tmp_path / "nope.txt")


def test_jsonl_records_and_errors(tmp_path):
    f = tmp_path / "c.jsonl"
    rows = [
        {
            "id": "A1",
            "title": "T1",
            "abstract": " Text one. ",
            "decision": "Accept (Oral)",
            "authors": ["X", "Y"],
            "primary_area": "optimization",
        },
        {"id": "B2", "title": "T2", "abstract": "Text two."},
    ]
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    a, b = read_file(f)
    assert (a.paper_id, a.title, a.text, a.authors, a.decision) == (
        "A1",
        "T1",
        "Text one.",
        ["X", "Y"],
        "Accept (Oral)",
    )
    assert (b.paper_id, b.index, b.decision) == ("B2", 1, None)

    f.write_text(json.dumps(rows[0]) + "\n{not json\n")
    with pytest.raises(CorpusError, match=r"c\.jsonl:2: not valid JSON"):
        read_file(f)
    f.write_text(json.dumps(rows[0]) + "\n" + json.dumps({"id": "C", "title": "no abstract"}) + "\n")
    with pytest.raises(CorpusError, match=r"c\.jsonl:2: no 'abstract'"):
        read_file(f)
    f.write_text("[1, 2]\n")
    with pytest.raises(CorpusError, match=r":1: expected a JSON object"):
        read_file(f)


def test_folder_expansion_skips_metadata(tmp_path):
    from rag.settings import SEEDS_DIR

    files = expand_paths([SEEDS_DIR])
    assert [f.name for f in files] == ["000_e01d3feec203c69d.txt", "002_fdada5ea96b8bec8.txt"]
    with pytest.raises(CorpusError, match="no .txt, .jsonl or .csv"):
        expand_paths([tmp_path])


@pytest.mark.parametrize(
    "field, value",
    [
        ("title", {"en": "t"}),
        ("id", ["X1"]),
        ("id", True),
        ("abstract", ["We propose A."]),
        ("decision", 1),
        ("authors", "Ann Lee"),
        ("authors", ["Ann", {"name": "Bo"}]),
        ("primary_area", {"a": 1}),
        ("url", 3.5),
    ],
)
def test_non_scalar_field_is_reported_with_file_and_line(tmp_path, field, value):
    f = tmp_path / "c.jsonl"
    good = {"id": "G1", "title": "fine", "abstract": "We propose B. It works."}
    bad = {"id": "X1", "title": "t", "abstract": "We propose A. It works.", field: value}
    f.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(CorpusError, match=rf"c\.jsonl:2: field '{field}' must be"):
        read_file(f)


def test_field_types_that_are_fine(tmp_path):
    f = tmp_path / "c.jsonl"
    rec = {"id": 7, "title": None, "abstract": "We propose A.", "authors": ["A", "B"], "url": "http://x"}
    f.write_text(json.dumps(rec) + "\n")
    (p,) = read_file(f)
    assert p.paper_id == "7" and p.authors == ["A", "B"] and p.title is None


# ------------------------------------------------------------ issue 39: ids, CSV, bad text, limits
def test_generated_ids_differ_for_one_basename_in_two_folders(tmp_path):
    for folder, text in (("a", "We study graphs."), ("b", "We study audio.")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.txt").write_text(f"header\n\n{text}\n")
        (tmp_path / folder / "rows.jsonl").write_text(json.dumps({"abstract": text}) + "\n")
    for name in ("notes.txt", "rows.jsonl"):
        (a,), (b,) = read_file(tmp_path / "a" / name), read_file(tmp_path / "b" / name)
        assert a.paper_id != b.paper_id
        moved = tmp_path / "c" / name  # a moved file keeps its ids (and so its vectors)
        moved.parent.mkdir(exist_ok=True)
        moved.write_bytes((tmp_path / "a" / name).read_bytes())
        assert read_file(moved)[0].paper_id == a.paper_id


def test_id_zero_is_kept_and_an_empty_id_is_rejected(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(json.dumps({"id": 0, "abstract": "We study zero."}) + "\n")
    assert [p.paper_id for p in read_file(f)] == ["0"]
    for empty in ("", "  "):
        f.write_text(
            json.dumps({"id": "A", "abstract": "x."}) + "\n" + json.dumps({"id": empty, "abstract": "y."})
        )
        with pytest.raises(CorpusError, match=r"c\.jsonl:2: field 'id' is empty"):
            read_file(f)


def test_csv_is_read_as_records(tmp_path):
    f = tmp_path / "papers.csv"
    f.write_text(
        "id,Title,abstract,decision,authors\n"
        'C1,"Graph paper","We study graph neural networks, at scale.",Accept (Poster),"Ann Lee; Bo Li"\n'
        "C2,Audio paper,We study audio diffusion models.,,\n"
    )
    a, b = read_file(f)
    assert (a.paper_id, a.title, a.text, a.decision, a.authors) == (
        "C1",
        "Graph paper",
        "We study graph neural networks, at scale.",
        "Accept (Poster)",
        ["Ann Lee", "Bo Li"],
    )
    assert (b.paper_id, b.index, b.decision, b.authors) == ("C2", 1, None, None)
    f.write_text("id,title\nC1,Graph paper\n")
    with pytest.raises(CorpusError, match="no 'abstract' column"):
        read_file(f)
    f.write_text('id,abstract\nC1,"We study graphs.\nC2,unclosed')
    with pytest.raises(CorpusError, match=r"papers\.csv"):
        read_file(f)
    other = tmp_path / "paper.pdf"
    other.write_bytes(b"%PDF-1.4")
    with pytest.raises(CorpusError, match="unsupported file type '.pdf'"):
        read_file(other)


def test_lone_surrogate_and_deep_nesting_name_the_line(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text('{"id": "A", "abstract": "fine."}\n{"id": "S1", "abstract": "We study \\udc00 text."}\n')
    with pytest.raises(CorpusError, match=r"c\.jsonl:2: field 'abstract' holds an invalid character"):
        read_file(f)
    f.write_text("[" * 200_000 + "\n")
    with pytest.raises(CorpusError, match=r"c\.jsonl:1: JSON nested too deeply"):
        read_file(f)


def test_limits_on_one_ingest(tmp_path):
    import gzip

    from rag.ingest.corpus import Limits, read_corpus

    f = tmp_path / "c.jsonl"
    f.write_text(
        "".join(json.dumps({"id": f"m{i}", "abstract": f"We study x{i}."}) + "\n" for i in range(30))
    )
    assert len(read_corpus([f], Limits(max_records=30))) == 30
    with pytest.raises(CorpusError, match="more than 29 records"):
        read_corpus([f], Limits(max_records=29))
    with pytest.raises(CorpusError, match="RAG_STORAGE__MAX_INGEST_BYTES"):
        read_corpus([f, f], Limits(max_bytes=f.stat().st_size + 10))  # the files together count
    bomb = tmp_path / "b.jsonl.gz"
    bomb.write_bytes(gzip.compress(b" " * 5_000_000))
    with pytest.raises(CorpusError, match="RAG_STORAGE__MAX_INGEST_BYTES"):
        read_corpus([bomb], Limits(max_bytes=1_000_000))
    f.write_text(json.dumps({"id": "big", "abstract": "word " * 5000}) + "\n")
    with pytest.raises(
        CorpusError, match=r"c\.jsonl:1: the abstract is 24,999 characters long; the limit is 20,000"
    ):
        read_corpus([f], Limits(max_chars=20_000))
