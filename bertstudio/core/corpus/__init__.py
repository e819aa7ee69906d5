"""Corpus search (what exBERT does, offline): index a text file's tokens and sentences at one layer,
cache the index on disk, and find the corpus tokens (or sentences) nearest a query by cosine."""
