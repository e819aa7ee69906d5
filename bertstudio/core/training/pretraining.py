"""Masked-LM + next-sentence pre-training data, and a from-scratch model with its own vocabulary.

Pairs follow BERT: for each sentence with a successor, 50% of the time the true next
sentence (label 0, "is next"), otherwise a sentence from another document (label 1). The
15% masking with 80/10/10 replacement is left to DataCollatorForLanguageModeling.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.training.options import opt

IS_NEXT, RANDOM_NEXT = 0, 1


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


def sentence_pairs(
    documents: Sequence[Sequence[str]], seed: int
) -> list[tuple[str, str, int]]:
    """(sentence A, sentence B, label): 50% true next, 50% from another document."""
    rng = random.Random(seed)
    pairs: list[tuple[str, str, int]] = []
    for d, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], IS_NEXT))
                continue
            other = rng.randrange(len(documents) - 1)
            other += other >= d  # any document but this one
            pairs.append((document[i], rng.choice(documents[other]), RANDOM_NEXT))
    if not pairs:
        raise InputError("The corpus has no document with two or more sentences, so no sentence pairs.")
    return pairs


def train_wordpiece(documents: Sequence[Sequence[str]], config: ScratchConfig) -> Any:
    """A BERT tokenizer whose WordPiece vocabulary is learnt from the user's corpus."""
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizer

    wordpiece = BertWordPieceTokenizer(lowercase=config.lowercase)
    wordpiece.train_from_iterator(
        (sentence for document in documents for sentence in document),
        vocab_size=config.vocab_size, min_frequency=1, show_progress=False,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
    )
    vocab = dict(sorted(wordpiece.get_vocab().items(), key=lambda item: item[1]))
    return BertTokenizer(vocab=vocab, do_lower_case=config.lowercase, model_max_length=config.max_length)


def scratch_model(tokenizer: Any, config: ScratchConfig) -> Any:
    """A randomly initialised BertForPreTraining (MLM + NSP heads) of the user's size."""
    from transformers import BertConfig, BertForPreTraining

    config.validate()
    bert = BertConfig(
        vocab_size=len(tokenizer), hidden_size=config.hidden_size, num_hidden_layers=config.layers,
        num_attention_heads=config.heads, intermediate_size=config.intermediate_size,
        max_position_embeddings=config.max_length, pad_token_id=tokenizer.pad_token_id,
    )
    return BertForPreTraining(bert)


def tokenized_pairs(
    tokenizer: Any, pairs: Sequence[tuple[str, str, int]], max_length: int, with_nsp: bool
) -> tuple[list[dict[str, Any]], list[int]]:
    """Examples for the MLM collator (with special_tokens_mask) and their untruncated lengths."""
    examples, lengths = [], []
    for a, b, label in pairs:
        if with_nsp:
            encoded = tokenizer(a, b, truncation="longest_first", max_length=max_length,
                                return_special_tokens_mask=True)
            lengths.append(len(tokenizer(a, b)["input_ids"]))
        else:
            encoded = tokenizer(a, truncation=True, max_length=max_length, return_special_tokens_mask=True)
            lengths.append(len(tokenizer(a)["input_ids"]))
        example = dict(encoded)
        if with_nsp:
            example["next_sentence_label"] = label
        examples.append(example)
    return examples, lengths


def mlm_only_sentences(documents: Sequence[Sequence[str]]) -> list[tuple[str, str, int]]:
    """Every sentence on its own, for models without a next-sentence head."""
    return [(s, "", 0) for document in documents for s in document]
