"""Ingest: corpus files -> papers -> chunks -> (shipped or computed) vectors, and the bundled catalog."""
