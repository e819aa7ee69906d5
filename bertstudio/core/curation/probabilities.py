"""Class probabilities for rows of text from a saved classifier, through the batch engine: the same
encode -> engine -> probabilities path Evaluate's classification predictor takes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.classification.spec import SPEC as CLASSIFICATION  # curation is for classifiers


def class_probabilities(loaded: LoadedModel, rows: Sequence[tuple[str, str | None]],
                        control: TaskControl | None = None) -> tuple[np.ndarray, tuple[str, ...]]:
    """(rows, classes) probabilities (softmax; sigmoid for a multi-label head) and the class names in
    column order; a model with no classes to rank (regression, one logit) is refused."""
    from bertstudio.core import engine
    from bertstudio.core.errors import InputError
    from bertstudio.core.tasks.classification import evaluate, steps

    classes = tuple(evaluate.model_labels(loaded))
    encoded = steps.encode(loaded, [(text, pair or "") for text, pair in rows], control)
    logits = engine.run_logits(loaded, encoded, control, verb="Scored")
    if not len(rows):
        return np.zeros((0, len(classes))), classes
    found = evaluate.class_probabilities(loaded.model.config, logits)
    if found is None:
        raise InputError("This model gives no class probabilities (a regression or one-output head).",
                         hint="Choose a classifier with two or more labels.")
    return np.asarray(found, dtype=np.float64), classes


def load_classifier(source: str, device: str = "cpu", control: TaskControl | None = None) -> LoadedModel:
    """A saved classifier, loaded afresh (a fold's model is used once, then its folder removed)."""
    from bertstudio.core.models import LoadRequest, load_uncached

    return load_uncached(LoadRequest(source, CLASSIFICATION.key, device), control)
