"""Answer shapes beyond the explain answer: lists, tables/comparisons, summaries, the lister."""
