"""Pre-training (masked LM + next sentence) on plain text: the pre-training spec's trainable, its
sentence pairs, validation metrics, and a from-scratch model with its own vocabulary.

Pairs follow BERT: for each sentence with a successor, 50% of the time the true next
sentence (label 0, "is next"), otherwise a sentence from another document (label 1). The
15% masking with 80/10/10 replacement is left to DataCollatorForLanguageModeling.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.model_folder import load_pretrained
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.pretraining.corpus import read_corpus
from bertstudio.core.training import data as data_mod
from bertstudio.core.training import metrics
from bertstudio.core.training.base import Config, Data, TrainableTask, load_model_class, specs_with_heads
from bertstudio.core.training.scratch_config import ScratchConfig

IS_NEXT, RANDOM_NEXT = 0, 1


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


def pretraining_metrics(nsp: bool) -> metrics.Metrics:
    """Masked-token accuracy, and next-sentence accuracy where the model has that head."""
    import numpy as np

    def compute(pred: Any) -> dict[str, float]:
        predictions = pred.predictions if isinstance(pred.predictions, tuple) else (pred.predictions,)
        golds = pred.label_ids if isinstance(pred.label_ids, tuple) else (pred.label_ids,)
        mlm_p, mlm_g = np.asarray(predictions[0]), np.asarray(golds[0])
        mask = mlm_g != -100
        out = {"mlm_accuracy": float((mlm_p[mask] == mlm_g[mask]).mean()) if mask.any() else 0.0}
        if nsp and len(predictions) > 1 and len(golds) > 1:
            out["nsp_accuracy"] = float((np.asarray(predictions[1]) == np.asarray(golds[1])).mean())
        return out

    return compute


def pretraining_class(folder: Path) -> tuple[Any, bool]:
    """BERT-style pre-training (MLM + NSP) where the architecture has it, else masked LM only."""
    import transformers
    from transformers import AutoConfig

    config = load_pretrained(AutoConfig, folder, f"The configuration in '{folder}' cannot be loaded.")
    cls = transformers.MODEL_FOR_PRETRAINING_MAPPING.get(type(config), None)
    if cls is not None and "next_sentence_label" in inspect.signature(cls.forward).parameters:  # type: ignore[attr-defined]
        return cls, True
    if type(config) not in transformers.MODEL_FOR_MASKED_LM_MAPPING:
        raise InputError(f"A {config.model_type} model has no masked-LM head to pre-train.")
    return transformers.MODEL_FOR_MASKED_LM_MAPPING[type(config)], False


class Pretraining(TrainableTask):
    key = "pretraining"  # the pre-training spec's key (test_task_packages checks it): the spec has no run
    order = 30
    title = "Pre-training: masked LM + next sentence (plain text)"
    demo_files = ("pretraining_corpus.txt", "")
    from_scratch = True
    heads = ("AutoModelForMaskedLM", "AutoModelForNextSentencePrediction")

    def reads_pairs(self, config: Config, control: TaskControl) -> bool:
        """Sentence pairs only for a base model with a next-sentence head (from scratch: BERT's both)."""
        if not config.model:
            return True
        from bertstudio.core.models import resolve_source

        return pretraining_class(resolve_source(config.model, control))[1]

    def read(self, config: Config, nsp: bool = True) -> Data:
        def pairs(documents: list[list[str]], seed: int) -> list[tuple[str, str, int]]:
            return sentence_pairs(documents, seed) if nsp else mlm_only_sentences(documents)

        documents = read_corpus(config.train_file)
        share = 0.0 if config.eval_file else config.eval_share
        if config.eval_file:
            train_docs, eval_docs = documents, read_corpus(config.eval_file)
        elif share > 0 and len(documents) >= 4:
            keep, held = data_mod.split_indices(len(documents), share, config.seed)
            train_docs, eval_docs = [documents[i] for i in keep], [documents[i] for i in held]
        else:
            train_docs, eval_docs = documents, None
        evaluation = pairs(eval_docs, config.seed + 1) if eval_docs else None
        return Data(pairs(train_docs, config.seed), evaluation)

    def load(self, folder: Path, config: Config, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        cls, nsp = pretraining_class(folder)
        return load_model_class(cls, folder), nsp

    def scratch(self, config: Config) -> tuple[Any, Any]:
        """(model, tokenizer) from scratch: a WordPiece vocabulary learnt from the corpus."""
        assert config.scratch is not None
        scratch = replace(config.scratch, max_length=config.max_length)  # positions follow the run
        tokenizer = train_wordpiece(read_corpus(config.train_file), scratch)
        return scratch_model(tokenizer, scratch), tokenizer

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool, control: TaskControl | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        return tokenized_pairs(tokenizer, rows, max_length, nsp)

    def collator(self, tokenizer: Any) -> Any:
        from transformers import DataCollatorForLanguageModeling

        if tokenizer.mask_token is None:
            raise InputError("This tokenizer has no mask token, so it cannot be pre-trained with masked LM.")
        return DataCollatorForLanguageModeling(tokenizer, mlm=True, mlm_probability=0.15)

    def metrics(self, labels: list[str], nsp: bool) -> metrics.Metrics:
        return pretraining_metrics(nsp)

    def opens_in(self, nsp: bool) -> tuple[str, ...]:
        """Without next-sentence prediction the saved model carries the masked-LM head only."""
        return self.open_in if nsp else specs_with_heads(self.heads[:1])
