"""Models: the packaged generator, its int8 cache, and the embedders (the only weight loaders)."""
