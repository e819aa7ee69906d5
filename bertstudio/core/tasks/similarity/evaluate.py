"""Evaluate for Similarity: an STS-style file (sentence1, sentence2, gold score) against the cosines.

The metrics are the two plain correlations STS benchmarks report, between the gold scores and
the model's cosines: Spearman (of ranks: what an embedding model is judged by, whatever the gold
scale, 0-5 or 0-1) and Pearson, both in -1..1, computed by scipy. A row's error is how far its
cosine's rank is from its gold score's rank (ranks among all rows, ties averaged); the errors are
the rows whose ranks differ, largest difference first.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core import notes
from bertstudio.core.evaluate.metrics import Scores, ranks
from bertstudio.core.evaluate.predict import EvalOptions, Prediction
from bertstudio.core.evaluate.readers import Dataset, EvalColumns, Example, PairFile, read_pairs
from bertstudio.core.json_values import text_number
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.similarity import SimilarityInput, embed_rows, pair_cosines

FIRST_NAMES = ("sentence1", "sentence_1", "sentence_a", "text_a", "s1", "a", "text")
SECOND_NAMES = ("sentence2", "sentence_2", "sentence_b", "text_b", "s2", "b", "text_pair")
SCORE_NAMES = ("score", "similarity", "gold", "label", "relatedness_score", "y")


STS_FILE = PairFile(("sentence1", FIRST_NAMES), ("sentence2", SECOND_NAMES), ("score", SCORE_NAMES), text_number,
                    "empty sentence1 or sentence2", "score '{value}' is not a number")


def read_file(path: Path, columns: EvalColumns, control: TaskControl | None = None) -> Dataset:
    """inputs = (sentence 1, sentence 2), gold = the score (a finite number, any scale)."""
    return read_pairs(path, columns, control, STS_FILE)


def predict(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
            options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    """The cosine of each pair (mean pooling, as the Similarity tab; every sentence of the file through the
    batch engine in one run) and its rank difference."""
    import torch

    n = len(examples)
    encoded, found = embed_rows(loaded, [x.inputs[0] for x in examples] + [x.inputs[1] for x in examples], "mean",
                                control)
    vectors = torch.from_numpy(found)
    cosines: list[float] = pair_cosines(vectors[:n], vectors[n:]) if n else []
    cut = len(encoded.cut)
    predicted, gold = ranks(cosines), ranks([float(x.gold) for x in examples])
    limit = loaded.info.max_length
    found = [notes.warning(f"{cut} sentence(s) were longer than the {limit} tokens the model reads and were cut; "
                           "their embeddings cover the first part only.")] if cut else []
    return [Prediction((c, abs(p - g)), f"{c:+.3f} (rank {p:g} of {n}; gold rank {g:g})", c)
            for c, p, g in zip(cosines, predicted, gold, strict=True)], found


def _correlations(golds: Sequence[float], cosines: Sequence[float]) -> dict[str, float]:
    """Spearman and Pearson; NaN where undefined (fewer than two rows, or a constant column)."""
    from scipy.stats import pearsonr, spearmanr

    if len(golds) < 2 or len(set(golds)) < 2 or len(set(cosines)) < 2:
        return {"spearman": float("nan"), "pearson": float("nan")}
    return {"spearman": float(spearmanr(golds, cosines).statistic),
            "pearson": float(pearsonr(golds, cosines).statistic)}


def metrics(golds: Sequence[Any], predictions: Sequence[Any], _labels: Sequence[str] = ()) -> Scores:
    """(metrics, no per-label scores, no confusion): the correlations of gold scores and cosines."""
    cosines = [float(value[0]) for value in predictions]
    values = _correlations([float(g) for g in golds], cosines)
    values["mean_rank_difference"] = (sum(float(v[1]) for v in predictions) / len(predictions)
                                      if predictions else float("nan"))
    return values, {}, None


def correct(_gold: Any, value: Any) -> bool:
    """A row is right when its cosine has the rank its gold score has."""
    return float(value[1]) < 0.5


def error_order(value: Any) -> float:
    """Errors largest rank difference first."""
    return -float(value[1])


def shown_gold(example: Example, _prediction: Any) -> str:
    return f"{float(example.gold):g}"


def inputs_of(example: Example) -> SimilarityInput:
    """A row opened in the Similarity tab: sentence 1 against sentence 2."""
    return SimilarityInput(example.inputs[0], (example.inputs[1],))
