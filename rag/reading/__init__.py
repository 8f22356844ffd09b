"""Reading: a question cleaned and read once into a typed Reading."""
