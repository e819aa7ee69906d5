"""BERT Studio: explore BERT-family models by pointing and clicking."""

__version__ = "0.1.0"
