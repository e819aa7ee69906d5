"""Predictions over a whole dataset, in batches, through each task's own code path.

Each spec's EvaluateAdapter names its predictor (and `prepare`) here. Classification goes through
`tasks.classification.classify_batch` (transformers' pipeline, batch 32), NER through the
token-classification pipeline with word-level aggregation, QA through `tasks.qa.answer`,
multiple choice through `tasks.multiple_choice.predict`. NSP and the masked LM are batched here
(the tasks score one sentence A / one text at a time). Every loop checks for cancellation and
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
    """The Classification task's pipeline (`loaded.pipeline("text-classification")`, as classify_batch
    runs it) at its top-1 default: evaluation needs only the predicted label and its score."""
    rows: list[Any] = [x.inputs[0] if not x.inputs[1] else {"text": x.inputs[0], "text_pair": x.inputs[1]}
                       for x in examples]
    rename = rename or {}
    cut = _too_long(loaded, examples, control)
    out: list[Prediction] = []
    with loaded.lock:
        pipe = scoring_pipeline(loaded)
        # A generator makes the pipeline batch internally and hand rows back one by one: progress
        # and cancelling between batches at no cost to throughput.
        # No top_k: the pipeline's default (legacy) top-1 path takes the argmax; top_k=1 would build
        # and sort every label's score first (x1.3 on a small model).
        # Truncation only when a row needs it, as classify_batch does (it costs every row time).
        cutting = {"truncation": True, "max_length": loaded.info.max_length} if cut else {}
        logits = []
        for raw in pipe((row for row in rows), batch_size=options.batch_size, **cutting):
            best = raw[0] if isinstance(raw, list) else raw
            label = rename.get(str(best["label"]), str(best["label"]))
            out.append(Prediction(label, label, float(best["score"])))
            logits.append(best[LOGITS])
            if len(out) % options.batch_size == 0 or len(out) == len(rows):
                _progress(control, len(out), len(rows), "Classified")
    out = with_probabilities(loaded, out, logits, rename)
    lines = ", ".join(str(examples[i].line) for i in cut[:10]) + ("…" if len(cut) > 10 else "")
    limit = loaded.info.max_length
    return out, [f"{len(cut)} row(s) were longer than the {limit} tokens the model reads and were cut "
                 f"(lines {lines})."] if cut else []


LOGITS = "bertstudio_logits"  # the key under which the scoring pipeline hands each row's logits back


def scoring_pipeline(loaded: LoadedModel) -> Any:
    """transformers' text-classification pipeline (the class `loaded.pipeline` builds) whose top-1
    result also carries the row's logits: every class's probability at no cost to the top-1 path
    (`top_k=None` builds and sorts a dict per class: +16 ms per 512 rows of 27 classes)."""
    key = "pipeline:text-classification:logits"
    if key not in loaded.extras:
        base = loaded.pipeline("text-classification")

        class WithLogits(type(base)):  # type: ignore[misc, valid-type]
            def postprocess(self, model_outputs: Any, *args: Any, **kwargs: Any) -> Any:
                found = super().postprocess(model_outputs, *args, **kwargs)
                best = found[0] if isinstance(found, list) else found
                best[LOGITS] = model_outputs["logits"][0].float().numpy()
                return found

        loaded.extras[key] = WithLogits(model=base.model, tokenizer=base.tokenizer, device=base.device)
    return loaded.extras[key]


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


def _too_long(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl) -> list[int]:
    """Rows with more tokens than the model reads. No tokenizer makes more than two tokens per byte,
    so only rows that might be too long are tokenized (in chunks that check for a cancel), as the
    Classification task does."""
    limit = loaded.info.max_length
    doubtful = [i for i, x in enumerate(examples)
                if 2 * sum(len(t.encode("utf-8")) for t in x.inputs if t) + 3 > limit]
    found: list[int] = []
    for _start, part in _chunks(doubtful, control, "Checking the length of"):
        firsts = [examples[i].inputs[0] for i in part]
        seconds = [examples[i].inputs[1] for i in part]
        ids = loaded.tokenizer(firsts, seconds if all(seconds) else None, truncation=False)["input_ids"]
        found += [i for i, row in zip(part, ids, strict=True) if len(row) > limit]
    return found


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
    import torch

    from bertstudio.core.tasks.nsp import IS_NEXT as IS_NEXT_ID
    from bertstudio.core.tasks.nsp import require_nsp_head

    require_nsp_head(loaded)
    out = []
    with loaded.lock, torch.inference_mode():
        for start in range(0, len(examples), options.batch_size):
            chunk = examples[start:start + options.batch_size]
            encoding = loaded.tokenizer([x.inputs[0] for x in chunk], [x.inputs[1] for x in chunk],
                                        return_tensors="pt", padding=True, truncation="longest_first",
                                        max_length=loaded.info.max_length).to(loaded.model.device)
            probabilities = torch.softmax(loaded.model(**encoding).logits.float(), dim=-1)[:, IS_NEXT_ID].tolist()
            for p in probabilities:
                label = IS_NEXT if p >= 0.5 else NOT_NEXT
                out.append(Prediction(label, label, p if label == IS_NEXT else 1.0 - p, (1.0 - p, p), NSP_CLASSES))
            _progress(control, len(out), len(examples), "Scored")
    return out, []


def choice(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
           options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    from bertstudio.core.tasks.multiple_choice import predict

    out, cut = [], 0
    for i, example in enumerate(examples):
        control.check()
        result = predict(loaded, example.inputs[0], example.inputs[1])
        cut += result.truncated
        out.append(Prediction(result.best.index, f"{result.best.index}: {result.best.choice}", result.best.score))
        if (i + 1) % 8 == 0 or i + 1 == len(examples):
            _progress(control, i + 1, len(examples), "Scored")
    return out, [f"{cut} row(s) were longer than the model reads and were cut."] if cut else []

