"""One object per trainable task: how it reads its data, builds its model, encodes, collates,
scores and where the result opens. The engine, the `train` CLI and the Train tab ask
`TRAINABLE[config.task]` and never branch on the task itself.

Where a result opens is not a list of app task keys: a trainable names the transformers heads its
saved model carries (`heads`), and the result opens in every task spec whose model class is one of
them (a new task spec with such a head is offered without an edit here).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from bertstudio.core.errors import InputError, ModelSourceError
from bertstudio.core.tasks.pretraining import SPEC as PRETRAINING
from bertstudio.core.training import data as data_mod
from bertstudio.core.training import metrics

if TYPE_CHECKING:  # config lists TRAINABLE's keys as the --task choices
    from bertstudio.core.training.config import TrainConfig


@dataclass
class Data:
    train: Any  # ClassificationData | list[TaggedSentence] | list[tuple[str, str, int]]
    eval: Any
    labels: list[str] = field(default_factory=list)
    notes: tuple[str, ...] = ()


def load_model_class(cls: Any, folder: Path, **kwargs: Any) -> Any:
    """from_pretrained with every failure (corrupt weights, custom code, pickles) as one message."""
    try:
        return cls.from_pretrained(folder, trust_remote_code=False, **kwargs)
    except Exception as error:  # noqa: BLE001 - any loader failure is the model's, told in one line
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ModelSourceError(f"The model in '{folder}' cannot be loaded for training: {first[:200]}",
                               hint="Choose a complete model folder (config.json and safetensors weights).",
                               details=repr(error)) from error


def _held_out(items: list, config: TrainConfig) -> tuple[list, list | None]:
    share = 0.0 if config.eval_file else config.eval_share
    if share <= 0 or len(items) < 2:
        return items, None
    keep, held = data_mod.split_indices(len(items), share, config.seed)
    return [items[i] for i in keep], [items[i] for i in held]


def specs_with_heads(heads: tuple[str, ...]) -> tuple[str, ...]:
    """The keys of the task specs whose model class is one of `heads`, in the order of `heads`."""
    from bertstudio.core.tasks.spec import all_specs

    return tuple(spec.key for head in heads for spec in all_specs().values() if spec.model_class == head)


class TrainableTask:
    """The base: a `--task` key, what the form says, where its result opens, the steps the engine calls."""

    key: ClassVar[str]  # the `train --task` value and the run folder's marker
    title: ClassVar[str]  # what the Train form lists
    demo_files: ClassVar[tuple[str, str]]  # (training, validation or "") under resources/datasets
    auto_class: ClassVar[str] = ""  # the transformers Auto class of the head
    from_scratch: ClassVar[bool] = False  # may start from nothing (a new vocabulary and model)
    columns: ClassVar[bool] = False  # reads named columns of a table (the form offers them)
    # The Auto classes whose heads the saved model carries (default: `auto_class`), the first one
    # first: Evaluate scores the result as the first task it opens in.
    heads: ClassVar[tuple[str, ...]] = ()

    @property
    def open_in(self) -> tuple[str, ...]:
        """The task specs that can load the saved model (every head it may carry)."""
        return specs_with_heads(self.heads or (self.auto_class,))

    def read(self, config: TrainConfig, nsp: bool = True) -> Data:
        raise NotImplementedError

    def needs_model_probe(self, config: TrainConfig) -> bool:
        """Whether `read` depends on the model (pre-training: with or without NSP pairs)."""
        return False

    def load(self, folder: Path, config: TrainConfig, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        """(model with this task's head, whether it trains next-sentence prediction)."""
        import transformers

        id2label = dict(enumerate(labels))
        auto = getattr(transformers, self.auto_class)
        model = load_model_class(auto, folder, num_labels=len(labels), id2label=id2label,
                                 label2id={v: k for k, v in id2label.items()}, ignore_mismatched_sizes=True)
        return model, False

    def scratch(self, config: TrainConfig) -> tuple[Any, Any]:
        """(model, tokenizer) built from nothing: only pre-training can."""
        raise InputError("Only pre-training can start from scratch.", hint="Choose a base model.")

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool) -> tuple[list[dict[str, Any]], list[int]]:
        raise NotImplementedError

    def collator(self, tokenizer: Any) -> Any:
        raise NotImplementedError

    def metrics(self, labels: list[str], nsp: bool) -> metrics.Metrics:
        raise NotImplementedError

    def opens_in(self, nsp: bool) -> tuple[str, ...]:
        """The task specs that can load the model this run saved."""
        return self.open_in


class TextClassification(TrainableTask):
    key = "text-classification"
    title = "Text classification (CSV / TSV / JSONL)"
    demo_files = ("reviews_train.csv", "reviews_eval.csv")
    columns = True
    auto_class = "AutoModelForSequenceClassification"

    def read(self, config: TrainConfig, nsp: bool = True) -> Data:
        train = data_mod.read_classification(config.train_file, config.columns)
        evaluation = data_mod.read_classification(config.eval_file, train.columns) if config.eval_file else None
        share = 0.0 if config.eval_file else config.eval_share
        if evaluation is None and share > 0 and len(train) > 1:
            keep, held = data_mod.split_indices(len(train), share, config.seed)
            train, evaluation = train.subset(keep), train.subset(held)
        labels = sorted(set(train.labels))
        if evaluation is not None:
            unknown = [data_mod.RowIssue(line, f"label '{label}' never occurs in the training data")
                       for label, line in zip(evaluation.labels, evaluation.lines, strict=True) if label not in labels]
            data_mod.raise_issues(Path(config.eval_file or config.train_file), unknown)
        if len(labels) < 2:
            raise InputError("Text classification needs at least two different labels in the training data.")
        notes: tuple[str, ...] = ()
        if train.merged_labels:
            notes = (f"Numeric labels were normalised: {', '.join(repr(x) for x in train.merged_labels)} "
                     f"count as the same class as their plain number.",)
        return Data(train, evaluation, labels, notes)

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool) -> tuple[list[dict[str, Any]], list[int]]:
        index = {label: i for i, label in enumerate(labels)}
        args = (list(rows.texts), list(rows.pairs)) if rows.pairs is not None else (list(rows.texts),)
        encoded = tokenizer(*args, truncation=True, max_length=max_length)
        lengths = [len(ids) for ids in tokenizer(*args)["input_ids"]]
        examples = [{**{key: encoded[key][i] for key in encoded}, "labels": index[label]}
                    for i, label in enumerate(rows.labels)]
        return examples, lengths

    def collator(self, tokenizer: Any) -> Any:
        from transformers import DataCollatorWithPadding

        return DataCollatorWithPadding(tokenizer)

    def metrics(self, labels: list[str], nsp: bool) -> metrics.Metrics:
        return metrics.classification(labels)


class TokenClassification(TrainableTask):
    key = "token-classification"
    title = "Token classification / NER (CoNLL)"
    demo_files = ("ner_train.conll", "ner_eval.conll")
    auto_class = "AutoModelForTokenClassification"

    def read(self, config: TrainConfig, nsp: bool = True) -> Data:
        sentences = data_mod.read_conll(config.train_file)
        if config.eval_file:
            evaluation: list | None = data_mod.read_conll(config.eval_file)
        else:
            sentences, evaluation = _held_out(sentences, config)
        labels = data_mod.label_list([s.tags for s in sentences])
        if evaluation is not None:
            unknown = [data_mod.RowIssue(s.line, f"tag '{t}' never occurs in the training data")
                       for s in evaluation for t in s.tags if t not in labels]
            data_mod.raise_issues(Path(config.eval_file or config.train_file), unknown)
        return Data(sentences, evaluation, labels)

    def load(self, folder: Path, config: TrainConfig, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        if not getattr(tokenizer, "is_fast", False):
            raise ModelSourceError("Token classification needs a fast tokenizer (tokenizer.json) for word alignment.")
        return super().load(folder, config, labels, tokenizer)

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool) -> tuple[list[dict[str, Any]], list[int]]:
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

    try:
        config = AutoConfig.from_pretrained(folder, trust_remote_code=False)
    except Exception as error:  # noqa: BLE001 - a broken or custom-code config.json, told in one line
        raise ModelSourceError(f"The configuration in '{folder}' cannot be loaded.", details=repr(error)) from error
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

    def needs_model_probe(self, config: TrainConfig) -> bool:
        return bool(config.model)

    def read(self, config: TrainConfig, nsp: bool = True) -> Data:
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

    def load(self, folder: Path, config: TrainConfig, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        cls, nsp = pretraining_class(folder)
        return load_model_class(cls, folder), nsp

    def scratch(self, config: TrainConfig) -> tuple[Any, Any]:
        """(model, tokenizer) from scratch: a WordPiece vocabulary learnt from the corpus."""
        from bertstudio.core.training.pretraining import scratch_model, train_wordpiece

        assert config.scratch is not None
        scratch = replace(config.scratch, max_length=config.max_length)  # positions follow the run
        tokenizer = train_wordpiece(data_mod.read_corpus(config.train_file), scratch)
        return scratch_model(tokenizer, scratch), tokenizer

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool) -> tuple[list[dict[str, Any]], list[int]]:
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
                                                                     Pretraining())}
