from rag.ingest.chunk import chunk_paper, content_hash, embed_text, make_splitter
from rag.settings import Settings


def test_offsets_round_trip_and_fit_the_embedder(seed_papers, embedder):
    s = Settings()
    splitter = make_splitter(s.storage.chunk_size, s.storage.chunk_overlap)
    longest = 0
    for p in seed_papers:
        chunks = chunk_paper(p, splitter)
        assert chunks
        for c in chunks:
            assert p.text[c.start : c.end] == c.text
            longest = max(longest, embedder.count_tokens(embed_text(c, p)))
        # chunks cover the whole abstract
        assert chunks[0].start == 0 and chunks[-1].end == len(p.text)
        assert len({c.chunk_id for c in chunks}) == len(chunks)
    # chunks fit the model's 256-wordpiece window; embedding deliberately reads the first 128
    assert longest <= 256
    assert embedder.max_seq_length == s.storage.embed_max_tokens == 128


def test_content_hash_tracks_text_and_settings(seed_papers):
    p = seed_papers[0]
    h = content_hash(p, 172, 16)
    assert h == content_hash(p, 172, 16)
    assert h != content_hash(p, 200, 16)
    from dataclasses import replace

    assert h != content_hash(replace(p, text=p.text + " More."), 172, 16)
