"""The size of a model pre-trained from scratch (vocabulary, layers, heads...), apart from the
pre-training task (core/tasks/pretraining/train.py) so that config.py can hold it as it holds
DistillConfig: each field's Option generates the `train` CLI flag and the Train form row.
"""

from __future__ import annotations

from dataclasses import dataclass

from bertstudio.core.errors import InputError
from bertstudio.core.training.options import opt


@dataclass(frozen=True)
class ScratchConfig:
    """A small BERT the user sizes; its WordPiece vocabulary is trained on their corpus."""

    vocab_size: int = opt(3000, flag="--vocab-size", label="Vocabulary", widget="int", low=100, high=100_000,
                          group="Model size", help="WordPiece vocabulary size")
    layers: int = opt(2, flag="--layers", label="Layers", widget="int", low=1, high=48, group="Model size",
                      help="transformer layers")
    heads: int = opt(2, flag="--heads", label="Heads", widget="int", low=1, high=64, group="Model size",
                     help="attention heads per layer")
    hidden_size: int = opt(128, flag="--hidden-size", label="Hidden size", widget="int", low=8, high=8192,
                           group="Model size", help="hidden size (a multiple of the heads)")
    intermediate_size: int = opt(512, flag="--ffn-size", label="Feed-forward size", widget="int", low=8,
                                 high=32768, group="Model size", help="feed-forward (intermediate) size")
    max_length: int = 128  # set from the run's --max-length
    lowercase: bool = True

    def validate(self) -> None:
        if self.hidden_size % self.heads:
            raise InputError(
                f"The hidden size ({self.hidden_size}) must be a multiple of the number of heads ({self.heads})."
            )
        if min(self.vocab_size, self.layers, self.heads, self.hidden_size, self.intermediate_size) < 1:
            raise InputError("Every size of a from-scratch model must be at least 1.")
        if self.max_length < 8:
            raise InputError("The maximum length of a from-scratch model must be at least 8 tokens.")
