"""Grounding: evidence sentences, citations, the one outcome decision and the final Reply."""
