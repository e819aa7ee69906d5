"""What behavioural suites (core/suites) need of next-sentence prediction: a case's two sentences and
the class names its Evaluate predictor gives (the NSP head's logits have no id2label)."""

from __future__ import annotations

from typing import Any

from bertstudio.core.tasks.nsp import NSP_CLASSES


def sentence_pair(case: tuple[str, ...]) -> tuple[str, ...]:
    """A case as Evaluate's NSP rows hold it: (sentence A, sentence B)."""
    return tuple(case)


def nsp_labels(_loaded: Any) -> tuple[str, ...]:
    """NSP's classes as its Evaluate predictor names them."""
    return tuple(NSP_CLASSES)
