from rag.cli import app

app()
