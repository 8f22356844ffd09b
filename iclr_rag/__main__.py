from iclr_rag.cli import app

app()
