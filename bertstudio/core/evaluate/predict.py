"""Predictions over a whole dataset, in batches, through each task's own code path.

Each spec's EvaluateAdapter names its predictor (and `prepare`) here. Classification and NSP go
through the batch engine (core/engine.py: tokenized once, sorted by length, a token budget), NER through the
token-classification pipeline with word-level aggregation, QA through `tasks.qa.answer`,
multiple choice through `tasks.multiple_choice.predict`. The masked LM is batched here (one
masked position per row; it stays on its own loop until it moves to the engine). Every loop checks for cancellation and
reports progress once per batch.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.metrics import MaskedStats
from bertstudio.core.evaluate.readers import IS_NEXT, NOT_NEXT, Dataset, Example
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl

BATCH_SIZE = 32
T = TypeVar("T")
# Rows per tokenizer call before the model runs: one call over 200,000 rows took seconds in which
# neither Cancel nor Ctrl+C (a signal waits for the call to return) was seen.
TOKENIZE_CHUNK = 1024


@dataclass(frozen=True)
class EvalOptions:
    batch_size: int = BATCH_SIZE
    seed: int = 0  # the masked LM's masking
    mask_share: float = 0.15  # share of a text's tokens that are masked (at least one)


@dataclass(frozen=True)
class Prediction:
    """One row's prediction: the task-shaped value metrics read, what a person reads, and a score."""

    value: Any
    shown: str
    score: float
    # Single-label tasks: every class's probability (a row of one (rows, classes) array) and the
    # classes in its column order (one tuple shared by every row), for curves and thresholds.
    probabilities: Any = None
    classes: tuple[str, ...] = ()


def _progress(control: TaskControl, done: int, total: int, verb: str) -> None:
    control.check()
    control.report(f"{verb} {done} of {total} rows", done / total if total else 1.0)


# -- classification ----------------------------------------------------------------------------
Prepared = tuple[list[str], list[str], dict[str, Any]]  # (labels for metrics, notes, keywords for the predictor)


def model_labels(loaded: LoadedModel) -> list[str]:
    return [loaded.info.id2label[i] for i in sorted(loaded.info.id2label)]


def prepare_classification(loaded: LoadedModel, dataset: Dataset) -> Prepared:
    """The model's labels as the file names them (generic LABEL_n matched to numbers), before any row runs."""
    rename, note = label_problem(loaded, dataset)
    return [rename.get(label, label) for label in model_labels(loaded)], [note] if note else [], {"rename": rename}


def label_problem(loaded: LoadedModel, dataset: Dataset) -> tuple[dict[str, str], str]:
    """Model label -> file label map, and a note when generic LABEL_n names were matched to numbers.
    A gold label the model does not know is an error naming it and its line."""
    known = model_labels(loaded)
    golds = {str(x.gold) for x in dataset.examples}
    if golds <= set(known):
        return {}, ""
    generic = {f"LABEL_{i}": str(i) for i in loaded.info.id2label if loaded.info.id2label[i] == f"LABEL_{i}"}
    if generic and golds <= set(generic.values()):
        return generic, "The model's labels are generic (LABEL_0…); they were matched to the file's numbers 0…"
    first = next(x for x in dataset.examples if str(x.gold) not in known)
    raise InputError(
        f"Line {first.line} has the label '{first.gold}', which the model does not know.",
        hint=f"The model's labels: {', '.join(known) or 'none'}. Relabel the file or choose the matching model.")


def classification(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
                   options: EvalOptions, rename: dict[str, str] | None = None) -> tuple[list[Prediction], list[Any]]:
    """Every row through the batch engine (core/engine.py: sorted by length, a token budget, at most
    `options.batch_size` rows per forward), read as the text-classification pipeline reads a row:
    its top label and score, and every class's probability for curves and thresholds."""
    from bertstudio.core import engine
    from bertstudio.core.tasks.classification import label_scores

    rename = rename or {}
    pairs = [x.inputs[1] or None for x in examples] if any(x.inputs[1] for x in examples) else None
    encoded = engine.encode_all(loaded, [x.inputs[0] for x in examples], pairs, control)
    logits = engine.run_logits(loaded, encoded, control, max_rows=options.batch_size, verb="Classified")
    out: list[Prediction] = []
    if len(examples):
        scores = label_scores(loaded.model.config, logits)
        names = loaded.info.id2label
        for row in scores:
            best = int(row.argmax())
            label = rename.get(str(names[best]), str(names[best]))
            out.append(Prediction(label, label, float(row[best])))
    out = with_probabilities(loaded, out, list(logits), rename)
    return out, engine.cut_note(loaded, encoded, [x.line for x in examples])


def class_probabilities(config: Any, logits: Any) -> Any:
    """(rows, classes) probabilities as TextClassificationPipeline.postprocess makes them (sigmoid for a
    multi-label head, softmax otherwise); None for a regression or one-logit head (no classes to rank)."""
    import numpy as np

    values = np.asarray(logits, dtype=np.float64)
    if config.problem_type == "regression" or values.ndim != 2 or values.shape[1] < 2:
        return None
    if config.problem_type == "multi_label_classification":
        return (1.0 / (1.0 + np.exp(-values))).astype(np.float32)
    shifted = np.exp(values - values.max(axis=1, keepdims=True))
    return (shifted / shifted.sum(axis=1, keepdims=True)).astype(np.float32)


def with_probabilities(loaded: LoadedModel, predictions: list[Prediction], logits: list[Any],
                       rename: dict[str, str]) -> list[Prediction]:
    """The predictions with their class probabilities (rows of one array, columns in label-id order)."""
    import numpy as np

    if not predictions:
        return predictions
    probabilities = class_probabilities(loaded.model.config, np.stack(logits))
    if probabilities is None:
        return predictions
    classes = tuple(rename.get(label, label) for label in model_labels(loaded))
    return [Prediction(p.value, p.shown, p.score, row, classes)
            for p, row in zip(predictions, probabilities, strict=True)]


def _chunks(items: Sequence[T], control: TaskControl, verb: str) -> Iterator[tuple[int, Sequence[T]]]:
    """(start, slice) of TOKENIZE_CHUNK items, with a cancel check and progress before each."""
    for start in range(0, len(items), TOKENIZE_CHUNK):
        control.check()
        control.report(f"{verb} {start} of {len(items)} rows", start / len(items))
        yield start, items[start:start + TOKENIZE_CHUNK]
    control.check()


# -- token classification ----------------------------------------------------------------------
def ner_types(loaded: LoadedModel) -> set[str]:
    from bertstudio.core.tasks.ner import entity_type

    return {entity_type(label) for label in loaded.info.id2label.values() if label != "O"}


def prepare_ner(loaded: LoadedModel, dataset: Dataset) -> Prepared:
    """Every gold tag's entity type is one the model knows (else an error naming its line)."""
    check_ner_tags(loaded, dataset)
    return [], [], {}


def check_ner_tags(loaded: LoadedModel, dataset: Dataset) -> None:
    known = ner_types(loaded)
    for example in dataset.examples:
        for offset, tag in enumerate(example.gold):
            if tag != "O" and tag[2:] not in known:
                raise InputError(
                    f"Line {example.line + offset} has the tag '{tag}': the model knows no entity type '{tag[2:]}'.",
                    hint=f"The model's types: {', '.join(sorted(known)) or 'none'}.")


def words_to_tags(words: Sequence[str], entities: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """IOB2 tags of the words of " ".join(words) from the pipeline's character-offset entities."""
    starts, position = [], 0
    for word in words:
        starts.append(position)
        position += len(word) + 1
    tags = ["O"] * len(words)
    for entity in entities:
        kind = str(entity.get("entity_group", entity.get("entity", "")))
        kind = kind[2:] if len(kind) > 2 and kind[1] == "-" else kind
        inside = [i for i, s in enumerate(starts) if s < entity["end"] and s + len(words[i]) > entity["start"]]
        for n, i in enumerate(inside):
            if tags[i] == "O":
                tags[i] = f"{'B' if n == 0 else 'I'}-{kind}"
    return tuple(tags)


def ner(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
        options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    """Word-level IOB2 tags from the pipeline's word aggregation ('first': a word takes its first
    wordpiece's label, the convention of transformers' run_ner evaluation)."""
    import warnings

    from bertstudio.core.tasks.ner import has_word_boundaries

    strategy = "first" if loaded.tokenizer.is_fast else "simple"
    notes = [] if has_word_boundaries(loaded.tokenizer) or strategy == "simple" else [
        "This tokenizer does not mark where words continue; word boundaries were taken from spaces."]
    texts = [" ".join(x.inputs) for x in examples]
    out: list[Prediction] = []
    with loaded.lock, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Tokenizer does not support real words")
        pipe = loaded.pipeline("token-classification")
        results = pipe((t for t in texts), batch_size=options.batch_size, aggregation_strategy=strategy)
        for example, entities in zip(examples, results, strict=True):
            tags = words_to_tags(example.inputs, entities)
            score = sum(float(e["score"]) for e in entities) / len(entities) if entities else 1.0
            out.append(Prediction(tags, entities_text(example.inputs, tags), score))
            if len(out) % options.batch_size == 0 or len(out) == len(examples):
                _progress(control, len(out), len(examples), "Tagged")
    return out, notes


def entities_text(words: Sequence[str], tags: Sequence[str]) -> str:
    """'Klaus/PER Vienna/LOC' from IOB2 tags (what the error browser shows)."""
    spans: list[list[str]] = []
    for word, tag in zip(words, tags, strict=True):
        if tag.startswith("B-") or (tag.startswith("I-") and (not spans or spans[-1][1] != tag[2:])):
            spans.append([word, tag[2:]])
        elif tag.startswith("I-"):
            spans[-1][0] += f" {word}"
    return "; ".join(f"{text}/{kind}" for text, kind in spans) or "(none)"


# -- question answering ------------------------------------------------------------------------
def qa(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
       options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    from bertstudio.core.tasks.qa import QAOptions, answer

    no_answer = any(not x.gold for x in examples)
    settings = QAOptions(allow_no_answer=no_answer)
    notes = ["Some questions have no answer, so the empty answer was allowed to win (SQuAD 2.0)."] if no_answer else []
    out = []
    for i, example in enumerate(examples):
        control.check()  # each question is its own forward pass (windows batched inside `answer`)
        best = answer(loaded, example.inputs[0], example.inputs[1], settings, TaskControl()).best
        text = best.answer if best is not None else ""
        out.append(Prediction(text, text or "(no answer)", best.score if best is not None else 0.0))
        if (i + 1) % 8 == 0 or i + 1 == len(examples):
            _progress(control, i + 1, len(examples), "Answered")
    return out, notes


# -- masked LM ---------------------------------------------------------------------------------
def masked_positions(special: Sequence[int], row: int, options: EvalOptions) -> list[int]:
    """The seeded choice of tokens to mask in row `row`: the same for every model and every run."""
    candidates = [i for i, s in enumerate(special) if not s]
    if not candidates:
        return []
    count = max(1, round(options.mask_share * len(candidates)))
    return sorted(random.Random(options.seed * 1_000_003 + row).sample(candidates, count))


def masked_lm(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
              options: EvalOptions, first_row: int = 0) -> tuple[list[Prediction], list[Any]]:
    """Each chosen token masked alone (pseudo-likelihood, Salazar et al. 2020), batched across texts."""
    import torch

    tokenizer, model = loaded.tokenizer, loaded.model
    if tokenizer.mask_token_id is None:
        raise InputError(f"{loaded.info.architecture}'s tokenizer has no mask token, so it cannot fill masks.")
    jobs: list[tuple[int, int, list[int]]] = []  # (example, position, ids)
    for start, part in _chunks(examples, control, "Tokenized"):
        encoded = tokenizer([x.inputs for x in part], truncation=True, max_length=loaded.info.max_length,
                            return_special_tokens_mask=True)
        for n, (ids, special) in enumerate(zip(encoded["input_ids"], encoded["special_tokens_mask"], strict=True),
                                           start=start):
            jobs += [(n, p, ids) for p in masked_positions(special, first_row + n, options)]
    found: list[list[tuple[int, int, int, float]]] = [[] for _ in examples]  # (gold id, top1 id, in top5, nll)
    pad = tokenizer.pad_token_id or 0
    with loaded.lock, torch.inference_mode():
        for start in range(0, len(jobs), options.batch_size):
            chunk = jobs[start:start + options.batch_size]
            width = max(len(ids) for _, _, ids in chunk)
            ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            attention = torch.zeros((len(chunk), width), dtype=torch.long)
            for k, (_, position, row) in enumerate(chunk):
                ids[k, :len(row)] = torch.tensor(row)
                attention[k, :len(row)] = 1
                ids[k, position] = tokenizer.mask_token_id
            logits = model(input_ids=ids.to(model.device), attention_mask=attention.to(model.device)).logits
            rows = torch.arange(len(chunk))
            positions = torch.tensor([p for _, p, _ in chunk])
            log_probs = torch.log_softmax(logits[rows, positions].float(), dim=-1).cpu()
            gold = torch.tensor([row[p] for _, p, row in chunk])
            top5 = log_probs.topk(5, dim=-1).indices
            nll = -log_probs[rows, gold]
            for k, (n, _, _) in enumerate(chunk):
                found[n].append((int(gold[k]), int(top5[k, 0]), int(gold[k] in top5[k]), float(nll[k])))
            _progress(control, min(len(examples), chunk[-1][0] + 1), len(examples), "Scored")
    out = []
    for tokens in found:
        gold_words = tuple(tokenizer.convert_ids_to_tokens([g for g, _, _, _ in tokens]))
        top_words = tuple(tokenizer.convert_ids_to_tokens([t for _, t, _, _ in tokens]))
        stats = MaskedStats(len(tokens), sum(g == t for g, t, _, _ in tokens), sum(f for _, _, f, _ in tokens),
                            sum(x for _, _, _, x in tokens), gold_words, top_words)
        out.append(Prediction(stats, " ".join(top_words), stats.top1 / stats.masked if stats.masked else 0.0))
    return out, []


# -- NSP and multiple choice ---------------------------------------------------------------------
NSP_CLASSES = (NOT_NEXT, IS_NEXT)  # probability columns: IsNext second, the positive class


def nsp(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
        options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    """P(IsNext) per pair, as tasks.nsp scores it (softmax of the NSP head's logits; label 0 = IsNext)."""
    import numpy as np

    from bertstudio.core import engine
    from bertstudio.core.tasks.nsp import IS_NEXT as IS_NEXT_ID
    from bertstudio.core.tasks.nsp import require_nsp_head

    require_nsp_head(loaded)
    encoded = engine.encode_all(loaded, [x.inputs[0] for x in examples], [x.inputs[1] for x in examples], control)
    logits = engine.run_logits(loaded, encoded, control, max_rows=options.batch_size).astype(np.float64)
    out = []
    for p in _softmax_column(logits, IS_NEXT_ID):
        label = IS_NEXT if p >= 0.5 else NOT_NEXT
        out.append(Prediction(label, label, p if label == IS_NEXT else 1.0 - p, (1.0 - p, p), NSP_CLASSES))
    return out, engine.cut_note(loaded, encoded, [x.line for x in examples])


def _softmax_column(logits: Any, column: int) -> list[float]:
    import numpy as np

    if not len(logits):
        return []
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (shifted[:, column] / shifted.sum(axis=1)).tolist()  # type: ignore[no-any-return]


def choice(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
           options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    """The prompt paired with each ending, every pair of the file through the batch engine in one run
    (a choice head scores each row on its own: (1, rows, tokens) in, one logit per row out); a
    softmax over each prompt's endings, as tasks.multiple_choice.predict."""
    import numpy as np

    from bertstudio.core import engine
    from bertstudio.core.tasks.multiple_choice import MAX_CHOICES

    widest = max((len(x.inputs[1]) for x in examples), default=0)
    if widest > MAX_CHOICES:
        raise InputError(f"{widest} endings are more than the {MAX_CHOICES} this app scores at once.")
    owner = [n for n, x in enumerate(examples) for _ in x.inputs[1]]
    encoded = engine.encode_all(loaded, [x.inputs[0] for x in examples for _ in x.inputs[1]],
                                [c for x in examples for c in x.inputs[1]], control)
    model = loaded.model

    def forward(batch: engine.Batch) -> Any:
        return model(**{k: v.unsqueeze(0) for k, v in batch.inputs.items()}).logits[0]

    logits = np.asarray(engine.run(loaded, encoded, forward, control, max_rows=options.batch_size), np.float64)
    out, start = [], 0
    for example in examples:
        z = logits[start:start + len(example.inputs[1])]
        start += len(z)
        p = np.exp(z - z.max())
        p /= p.sum()
        best = int(p.argmax())
        out.append(Prediction(best, f"{best}: {example.inputs[1][best]}", float(p[best])))
    cut = len({owner[i] for i in encoded.cut})
    return out, [f"{cut} row(s) were longer than the model reads and were cut."] if cut else []
