"""Index: the Chroma store and the chunk/paper collections written and read through it."""
