"""One object per trainable task: how it reads its data, builds its model, encodes, collates,
scores and where the result opens. The engine, the `train` CLI and the Train tab ask
`TRAINABLE[config.task]` and never branch on the task itself.

Where a result opens is not a list of app task keys: a trainable names the transformers heads its
saved model carries (`heads`), and the result opens in every task spec whose model class is one of
them (a new task spec with such a head is offered without an edit here).
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError, ModelSourceError
from bertstudio.core.model_folder import load_pretrained
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.ner.spec import SPEC as NER_SPEC
from bertstudio.core.tasks.pretraining.spec import SPEC as PRETRAINING
from bertstudio.core.training import data as data_mod
from bertstudio.core.training import metrics
from bertstudio.core.training.base import (  # noqa: F401 - the names other modules import from here
    Config,
    Data,
    TextClassification,
    TrainableTask,
    load_model_class,
    specs_with_heads,
    train_and_validation,
)
from bertstudio.core.training.choice import MultipleChoice
from bertstudio.core.training.distill import Distillation
from bertstudio.core.training.qa import QuestionAnswering
from bertstudio.core.training.regression import Regression


class TokenClassification(TrainableTask):
    key = "token-classification"
    command = NER_SPEC.cli_name
    title = "Token classification / NER (CoNLL)"
    demo_files = ("ner_train.conll", "ner_eval.conll")
    auto_class = "AutoModelForTokenClassification"

    def read(self, config: Config, nsp: bool = True) -> Data:
        sentences, evaluation = train_and_validation(config, data_mod.read_conll)
        labels = data_mod.label_list([s.tags for s in sentences])
        data_mod.check_label_count(config.train_file, labels)
        if evaluation is not None:
            unknown = [data_mod.RowIssue(s.line, f"tag '{t}' never occurs in the training data")
                       for s in evaluation for t in s.tags if t not in labels]
            data_mod.raise_issues(Path(config.eval_file or config.train_file), unknown)
        return Data(sentences, evaluation, labels)

    def load(self, folder: Path, config: Config, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        if not getattr(tokenizer, "is_fast", False):
            raise ModelSourceError("Token classification needs a fast tokenizer (tokenizer.json) for word alignment.")
        return super().load(folder, config, labels, tokenizer)

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool, control: TaskControl | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        """Label the first sub-token of each word; the rest get -100 (ignored by the loss)."""
        index = {label: i for i, label in enumerate(labels)}
        words = [list(s.tokens) for s in rows]
        encoded = tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length)
        lengths = [len(ids) for ids in tokenizer(words, is_split_into_words=True)["input_ids"]]
        examples = []
        for i, sentence in enumerate(rows):
            previous, tags = None, []
            for word in encoded.word_ids(i):
                tags.append(-100 if word is None or word == previous else index[sentence.tags[word]])
                previous = word
            examples.append({**{key: encoded[key][i] for key in encoded}, "labels": tags})
        return examples, lengths

    def collator(self, tokenizer: Any) -> Any:
        from transformers import DataCollatorForTokenClassification

        return DataCollatorForTokenClassification(tokenizer)

    def metrics(self, labels: list[str], nsp: bool) -> metrics.Metrics:
        return metrics.token_classification(labels)


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
    key = PRETRAINING.key  # this trains the pre-training spec's model (the spec has no run of its own)
    title = "Pre-training: masked LM + next sentence (plain text)"
    demo_files = ("pretraining_corpus.txt", "")
    from_scratch = True
    heads = ("AutoModelForMaskedLM", "AutoModelForNextSentencePrediction")

    def needs_model_probe(self, config: Config) -> bool:
        return bool(config.model)

    def read(self, config: Config, nsp: bool = True) -> Data:
        from bertstudio.core.training.pretraining import mlm_only_sentences, sentence_pairs

        def pairs(documents: list[list[str]], seed: int) -> list[tuple[str, str, int]]:
            return sentence_pairs(documents, seed) if nsp else mlm_only_sentences(documents)

        documents = data_mod.read_corpus(config.train_file)
        share = 0.0 if config.eval_file else config.eval_share
        if config.eval_file:
            train_docs, eval_docs = documents, data_mod.read_corpus(config.eval_file)
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
        from bertstudio.core.training.pretraining import scratch_model, train_wordpiece

        assert config.scratch is not None
        scratch = replace(config.scratch, max_length=config.max_length)  # positions follow the run
        tokenizer = train_wordpiece(data_mod.read_corpus(config.train_file), scratch)
        return scratch_model(tokenizer, scratch), tokenizer

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool, control: TaskControl | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        from bertstudio.core.training.pretraining import tokenized_pairs

        return tokenized_pairs(tokenizer, rows, max_length, nsp)

    def collator(self, tokenizer: Any) -> Any:
        from transformers import DataCollatorForLanguageModeling

        if tokenizer.mask_token is None:
            raise InputError("This tokenizer has no mask token, so it cannot be pre-trained with masked LM.")
        return DataCollatorForLanguageModeling(tokenizer, mlm=True, mlm_probability=0.15)

    def metrics(self, labels: list[str], nsp: bool) -> metrics.Metrics:
        return metrics.pretraining(nsp)

    def opens_in(self, nsp: bool) -> tuple[str, ...]:
        """Without next-sentence prediction the saved model carries the masked-LM head only."""
        return self.open_in if nsp else specs_with_heads(self.heads[:1])


TRAINABLE: dict[str, TrainableTask] = {task.key: task for task in (TextClassification(), TokenClassification(),
                                                                     Pretraining(), QuestionAnswering(),
                                                                     MultipleChoice(), Regression(),
                                                                     Distillation())}
