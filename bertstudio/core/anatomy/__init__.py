"""A model's anatomy: which parts an encoder has and where (families.py, pure; modules.py, on a loaded model)."""
