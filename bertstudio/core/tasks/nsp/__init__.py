"""Next-sentence prediction: P(IsNext) for a pair, or one sentence A against many B's, ranked.

BERT's NSP head was trained with label 0 = "B continues A" (IsNext) and label 1 = "B is a
random sentence" (NotNext). The numbers are the softmax of the model's own two logits, exactly
what BertForNextSentencePrediction computes; checkpoints whose NSP head would be newly
initialised are refused rather than shown as random numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bertstudio.core import engine, notes
from bertstudio.core.errors import InputError, MissingHeadError
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.nsp import steps
from bertstudio.core.text_limits import require_text

if TYPE_CHECKING:
    from bertstudio.core.compare import RankingDiff

IS_NEXT, NOT_NEXT = 0, 1  # BERT's labels: 0 = B continues A, 1 = B is random
IS_NEXT_NAME, NOT_NEXT_NAME = "IsNext", "NotNext"  # as a labelled file and Evaluate name them
NSP_CLASSES = (NOT_NEXT_NAME, IS_NEXT_NAME)  # Evaluate's probability columns: IsNext second, the positive class
LABEL_MEANING = "label 0 = IsNext (B continues A), label 1 = NotNext (B is a random sentence)"
MAX_CANDIDATES = 200


@dataclass(frozen=True)
class NspInput:
    """Sentence A and one candidate B (a pair: IsNext/NotNext) or several (ranked by P(IsNext))."""

    sentence_a: str
    candidates: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class NspResult:
    """One pair: probabilities of label 0 (IsNext) and label 1 (NotNext), and the raw logits."""

    sentence_a: str
    sentence_b: str
    is_next: float
    not_next: float
    logits: tuple[float, float]
    truncated: bool = False  # the pair was longer than the model reads and was cut
    max_length: int = 0

    @property
    def notes(self) -> tuple[Note, ...]:
        if not self.truncated:
            return ()
        return (notes.warning(f"The pair is longer than the {self.max_length} tokens the model reads and was cut "
                              "(the longer sentence first)."),)

    def to_json(self) -> dict[str, object]:
        return {"is_next": self.is_next, "not_next": self.not_next, "logits": list(self.logits),
                "notes": [n.to_json() for n in self.notes]}


@dataclass(frozen=True)
class NspRanking:
    """Candidates for B, most likely continuation first."""

    sentence_a: str
    results: tuple[NspResult, ...]
    max_length: int

    @property
    def truncated(self) -> tuple[NspResult, ...]:
        return tuple(r for r in self.results if r.truncated)

    @property
    def notes(self) -> tuple[Note, ...]:
        if not self.truncated:
            return ()
        return (notes.warning(f"{len(self.truncated)} pair(s) were longer than the {self.max_length} tokens the "
                              "model reads and were cut (the longer sentence first)."),)

    def to_json(self) -> list[dict[str, object]]:
        return [{"sentence_b": r.sentence_b, **r.to_json()} for r in self.results]


def require_nsp_head(loaded: LoadedModel) -> None:
    """Refuse a model whose NSP head was not trained: its numbers would be noise."""
    info = loaded.info
    report = info.head_report
    if report.complete:
        return
    missing = ", ".join((report.missing + report.mismatched)[:4])
    raise MissingHeadError(
        f"{info.architecture} from '{info.request.source}' has no trained next-sentence-prediction head "
        f"(newly initialised: {missing}); its P(IsNext) would be random numbers.",
        hint="Choose a checkpoint saved with BertForPreTraining or BertForNextSentencePrediction, "
        "such as bert-base-uncased.",
    )


def predict(loaded: LoadedModel, sentence_a: str, sentence_b: str) -> NspResult:
    """P(IsNext) and P(NotNext) for B following A: a ranking of one."""
    require_text(sentence_b, "sentence B")
    return rank(loaded, sentence_a, [sentence_b]).results[0]


def candidates_from_lines(text: str) -> list[str]:
    """One candidate B per non-empty line."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def rank(
    loaded: LoadedModel, sentence_a: str, candidates: Sequence[str], control: TaskControl | None = None
) -> NspRanking:
    """Score every candidate B after A (the batch engine), most likely continuation first."""
    require_nsp_head(loaded)
    require_text(sentence_a, "sentence A")
    kept = [c.strip() for c in candidates if c and c.strip()]
    if not kept:
        raise InputError("There are no candidate sentences B.", hint="Type one candidate sentence per line.")
    if len(kept) > MAX_CANDIDATES:
        raise InputError(f"{len(kept)} candidates is too many; at most {MAX_CANDIDATES} are ranked at once.")
    # read(forward(encode(rows))): the task's steps around the batch engine (sorted, a token budget)
    encoded = steps.encode(loaded, [(sentence_a, b) for b in kept], control)
    logits = engine.run_logits(loaded, encoded, control, unit="candidates")
    cut, limit = set(encoded.cut), loaded.info.max_length
    probabilities = steps.read(loaded, logits)
    results = [NspResult(sentence_a, b, float(p[IS_NEXT]), float(p[NOT_NEXT]), (float(z[0]), float(z[1])), i in cut,
                         limit) for i, (b, p, z) in enumerate(zip(kept, probabilities, logits, strict=True))]
    results.sort(key=lambda r: r.is_next, reverse=True)
    return NspRanking(sentence_a, tuple(results), loaded.info.max_length)


IS_NEXT_LABEL = "IsNext (label 0)"
NOT_NEXT_LABEL = "NotNext (label 1)"


def ranked_items(result: NspResult | NspRanking) -> list[tuple[str, float]]:
    """(label, probability) best first: IsNext/NotNext for one pair, (sentence B, P(IsNext)) for a ranking."""
    if isinstance(result, NspRanking):
        return [(r.sentence_b, r.is_next) for r in result.results]
    return sorted([(IS_NEXT_LABEL, result.is_next), (NOT_NEXT_LABEL, result.not_next)], key=lambda item: -item[1])


def compare(a: NspResult | NspRanking, b: NspResult | NspRanking) -> RankingDiff:
    """core.compare.RankingDiff of model A's result -> model B's (a pair, or a ranking of B's)."""
    from bertstudio.core.compare import compare_rankings

    return compare_rankings(ranked_items(a), ranked_items(b))


def run(loaded: LoadedModel, inputs: NspInput, control: TaskControl) -> NspResult | NspRanking:
    """One candidate: the pair's IsNext/NotNext; several: the candidates ranked."""
    if len(inputs.candidates) == 1:
        return predict(loaded, inputs.sentence_a, inputs.candidates[0])
    return rank(loaded, inputs.sentence_a, inputs.candidates, control)


# Trace why's Copy as Python: how its script reads P(target) from the outputs (the clean prediction).
PATCH_READER = (
    'def probability(outputs):  # label 0 = IsNext, 1 = NotNext\n'
    '    return outputs.logits.softmax(-1)[0, LABEL]\n'
    '\n'
    '\n'
    "LABEL = 0 if TARGET == 'is_next' else 1\n"
)
