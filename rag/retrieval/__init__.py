"""Retrieval: BM25 and dense search fused, paper filters, names in a question, authors, similar papers."""
