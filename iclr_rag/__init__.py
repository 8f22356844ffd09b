"""Entry points above the wings they join: the CLI imports the engine (rag/), the UI (ui/) and eval (eval/)."""
