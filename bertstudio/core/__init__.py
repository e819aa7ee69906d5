"""Pure task logic: torch and transformers live here, Qt never does (see tests/test_layering.py)."""
