"""Evaluation and benchmarks for iclr-rag: `rag eval` (eval.run) and `rag bench` (eval.bench).

The engine (`rag/`) never imports this package; only the CLI's eval/bench commands do, lazily.
"""
