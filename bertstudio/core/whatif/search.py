"""The counterfactual search: the fewest word edits that flip a task's prediction, verified.

A beam search over edits: depth d scores every proposal (`generators`) added to each of the
`beam` inputs whose original probability fell most at depth d - 1, in batches with a cancel
check between them. Inputs whose predicted class changed are candidates; they are ranked by the
number of edits, then by how far the original prediction's probability fell, and each is re-run
through the task's own `run` on its edited text: only those whose label really differs are kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bertstudio.core import engine
from bertstudio.core import notes as _notes
from bertstudio.core.errors import BertStudioError, InputError, MissingHeadError, TaskCancelled
from bertstudio.core.limits import check_count
from bertstudio.core.models import LoadedModel, LoadRequest, load_model
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.whatif import generators
from bertstudio.core.whatif.edits import MAX_WORDS, Edit, apply, words_of
from bertstudio.core.whatif.tasks import Prediction, score

if TYPE_CHECKING:
    from bertstudio.core.tasks.spec import TaskSpec

MAX_EDITS = 5
MAX_LIMIT = 50
MAX_PER_WORD = 20
MAX_BEAM = 16
MAX_EVALUATIONS = 20_000  # edited inputs scored in one search, whatever the options
VERIFY_TRIES = 4  # candidates re-run through the task per result asked for, at most
FORWARD_SECONDS = 0.25  # the longest a scoring forward should take: Cancel is checked between two


@dataclass(frozen=True)
class Options:
    method: str = "mlm"
    max_edits: int = 2
    limit: int = 5
    per_word: int = 8  # proposals per word
    beam: int = 4
    mlm: str | None = None  # the masked LM proposing words (None: the model's own MLM head)


def options(method: str = "mlm", max_edits: Any = 2, limit: Any = 5, per_word: Any = 8, beam: Any = 4,
            mlm: str | None = None) -> Options:
    """Options with every count within its bound (InputError naming the bound otherwise)."""
    if method not in generators.METHODS:
        raise InputError(f"Unknown counterfactual method {method!r}.", hint=f"Use {', '.join(generators.METHODS)}.")
    return Options(method, check_count(max_edits, "The number of edits", 1, MAX_EDITS),
                   check_count(limit, "The number of counterfactuals", 1, MAX_LIMIT),
                   check_count(per_word, "Proposals per word", 1, MAX_PER_WORD),
                   check_count(beam, "The beam width", 1, MAX_BEAM), (mlm or "").strip() or None)


@dataclass(frozen=True)
class Counterfactual:
    texts: tuple[str, ...]  # the task's texts, edited
    prediction: Prediction  # what the task's own run says of them
    edits: tuple[Edit, ...]
    drop: float  # how far the original prediction's probability fell

    def to_json(self) -> dict[str, object]:
        return {"text": self.texts[0], "texts": list(self.texts), "label": self.prediction.label,
                "score": self.prediction.score, "edits": [e.to_json() for e in self.edits]}


@dataclass(frozen=True)
class CounterfactualResult:
    method: str
    texts: tuple[str, ...]
    original: Prediction
    counterfactuals: tuple[Counterfactual, ...]
    evaluated: int  # edited inputs scored
    notes: tuple[Note, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, object]:
        return {"method": self.method, "original": self.original.to_json(),
                "counterfactuals": [c.to_json() for c in self.counterfactuals], "evaluated": self.evaluated,
                "notes": [n.to_json() for n in self.notes]}


def searchable(spec: TaskSpec) -> bool:
    return spec.counterfactual is not None and spec.explain is not None and spec.run is not None


def proposer_for(loaded: LoadedModel, spec: TaskSpec, source: str | None, control: TaskControl) -> LoadedModel:
    """The masked LM that proposes words: `source`, else the model's own MLM head (a fill-mask model is one)."""
    from bertstudio.core.tasks.spec import all_specs

    adapter = spec.counterfactual
    if source is None and adapter is not None and adapter.masked_lm:
        return loaded
    mlm_spec = next(s for s in all_specs().values() if s.counterfactual is not None and s.counterfactual.masked_lm)
    named = source or loaded.info.request.source
    request = loaded.info.request
    proposer = load_model(LoadRequest(named, mlm_spec.key, request.device, request.dtype), control)
    if not proposer.info.head_report.complete:
        raise MissingHeadError(
            f"'{named}' has no trained masked-LM head, so it cannot propose words.",
            hint="Choose a masked LM with the same vocabulary (for an uncased English BERT: bert-base-uncased), "
                 "or use hotflip or ablation.")
    if proposer is not loaded and proposer.tokenizer.get_vocab() != loaded.tokenizer.get_vocab():
        raise InputError(
            f"The masked LM '{named}' has another vocabulary than the model ({len(proposer.tokenizer):,} and "
            f"{len(loaded.tokenizer):,} tokens): its words are not the model's.",
            hint="Choose a masked LM with the same tokenizer (the model's base checkpoint).")
    return proposer


def find(loaded: LoadedModel, spec: TaskSpec, inputs: Any, chosen: Options, control: TaskControl,
         proposer: LoadedModel | None = None) -> CounterfactualResult:
    """Verified counterfactuals of `inputs` (the task's input dataclass), fewest edits first."""
    adapter, explain = spec.counterfactual, spec.explain
    if adapter is None or explain is None or spec.run is None:
        raise InputError(f"{spec.title} has no counterfactual search.")
    texts = tuple(explain.texts_of(inputs))
    with engine.holding(loaded):  # the whole search: no other job runs on the model meanwhile
        original = adapter.predicted(loaded, spec.run(loaded, inputs, control))
        control.check()
        words = words_of(loaded, texts, adapter.edits)
        found: list[Note] = []
        if len(words) > MAX_WORDS:
            found.append(_notes.info(f"The first {MAX_WORDS} of {len(words)} words were searched."))
            words = words[:MAX_WORDS]
        if not words:
            raise InputError("The input has no word a search could edit.")
        control.report("Proposing edits…", 0.0)
        proposals = _proposals(loaded, spec, texts, words, original.index, chosen, control, proposer)
        flipped, evaluated, cut = _beam(loaded, spec, texts, proposals, original.index, chosen, control)
        if cut:
            found.append(_notes.info(f"The search stopped at its bound of {MAX_EVALUATIONS:,} edited inputs."))
        results = _verified(loaded, spec, texts, original, flipped, chosen.limit, control)
    if not results:
        found.append(_notes.info(
            f"No edit of at most {chosen.max_edits} word(s) flipped the prediction ({evaluated:,} edited inputs "
            "scored).", "Allow more edits, more proposals per word, or another method."))
    return CounterfactualResult(chosen.method, texts, original, tuple(results), evaluated, tuple(found))


def _proposals(loaded: LoadedModel, spec: TaskSpec, texts: tuple[str, ...], words: list[Any], index: int,
               chosen: Options, control: TaskControl, proposer: LoadedModel | None) -> dict[Any, list[str]]:
    adapter = spec.counterfactual
    assert adapter is not None
    if chosen.method == "ablation":
        return generators.ablation(words, chosen.per_word)
    words = [w for w in words if w.text[:1].isalnum()]  # a punctuation mark is removed, never swapped for a word
    if chosen.method == "hotflip":
        return generators.hotflip(loaded, adapter, texts, words, index, chosen.per_word, control)
    proposer = proposer or proposer_for(loaded, spec, chosen.mlm, control)
    return generators.mlm(proposer, texts, words, chosen.per_word, control)


def _beam(loaded: LoadedModel, spec: TaskSpec, texts: tuple[str, ...], proposals: dict[Any, list[str]],
          index: int, chosen: Options, control: TaskControl
          ) -> tuple[list[tuple[tuple[Edit, ...], float]], int, bool]:
    """Flipped edit sets with P(original) after them; how many inputs were scored; whether the bound cut."""
    adapter = spec.counterfactual
    assert adapter is not None
    frontier: list[tuple[Edit, ...]] = [()]
    flipped: list[tuple[tuple[Edit, ...], float]] = []
    evaluated, cut, rows = 0, False, generators.BATCH
    for depth in range(1, chosen.max_edits + 1):
        children: dict[frozenset[tuple[Any, str]], tuple[Edit, ...]] = {}
        for state in frontier:
            used = {edit.word for edit in state}
            for word, news in proposals.items():
                if word in used:
                    continue
                for new in news:
                    child = tuple(sorted((*state, Edit(word, new)), key=lambda e: (e.word.part, e.word.start)))
                    children.setdefault(frozenset((e.word, e.new) for e in child), child)
        batch = list(children.values())
        if evaluated + len(batch) > MAX_EVALUATIONS:
            batch, cut = batch[:MAX_EVALUATIONS - evaluated], True
        kept: list[tuple[tuple[Edit, ...], float]] = []
        start = 0
        while start < len(batch):
            control.check()
            chunk = batch[start:start + rows]
            began = time.perf_counter()
            predicted, probabilities = score(loaded, adapter, [apply(texts, c) for c in chunk], index, control)
            rows = _next_rows(rows, len(chunk), time.perf_counter() - began)
            for edits, label, p in zip(chunk, predicted, probabilities, strict=True):
                (flipped if label != index else kept).append((edits, p))
            evaluated += len(chunk)
            start += len(chunk)
            done = start / max(len(batch), 1)
            control.report(f"{depth} edit(s): scored {start:,} of {len(batch):,}",
                           0.1 + 0.85 * (depth - 1 + done) / chosen.max_edits)
        if len(flipped) >= chosen.limit or cut:
            break  # results with fewer edits rank first: a deeper level could not come before them
        frontier = [edits for edits, _ in sorted(kept, key=lambda item: item[1])[:chosen.beam]]
        if not frontier:
            break
    return flipped, evaluated, cut


def _next_rows(rows: int, scored: int, seconds: float) -> int:
    """Rows for the next forward: halved while one takes longer than FORWARD_SECONDS (a long text, a big
    model or a busy machine), so Cancel, checked between forwards, still lands within a second; grown
    back up to generators.BATCH while they are quick."""
    if seconds > FORWARD_SECONDS and scored > 1:
        return max(1, scored // 2)
    if seconds < FORWARD_SECONDS / 4 and scored == rows:
        return min(generators.BATCH, rows * 2)
    return rows


def _verified(loaded: LoadedModel, spec: TaskSpec, texts: tuple[str, ...], original: Prediction,
              flipped: list[tuple[tuple[Edit, ...], float]], limit: int, control: TaskControl) -> list[Counterfactual]:
    """The candidates, fewest edits and largest fall first, that the task's own run confirms."""
    adapter, explain = spec.counterfactual, spec.explain
    assert adapter is not None and explain is not None and spec.run is not None
    results: list[Counterfactual] = []
    seen: set[tuple[str, ...]] = set()
    tries = 0
    for edits, p in sorted(flipped, key=lambda item: (len(item[0]), item[1])):
        if len(results) == limit or tries == limit * VERIFY_TRIES:
            break
        edited = apply(texts, edits)
        if edited in seen:
            continue
        seen.add(edited)
        tries += 1
        control.check()
        control.report(f"Checking counterfactual {len(results) + 1} with the task itself", 0.97)
        try:
            prediction = adapter.predicted(loaded, spec.run(loaded, explain.inputs_of(edited), control))
        except TaskCancelled:
            raise
        except BertStudioError:  # an edit that left a text empty: not a counterfactual
            continue
        if prediction.label != original.label:
            results.append(Counterfactual(edited, prediction, edits, original.score - p))
    # Shown fewest edits first, then the most confident flip (the score a person reads), not the
    # batch's estimate the search ranked by (issue 29 #19: the list looked unsorted).
    return sorted(results, key=lambda found: (len(found.edits), -found.prediction.score))
