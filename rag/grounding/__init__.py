"""Grounding: evidence sentences, citations, the one outcome decision and the Turn that every answer shape reads."""
