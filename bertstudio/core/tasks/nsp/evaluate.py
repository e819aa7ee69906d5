"""Evaluate for Next sentence: a file of pairs labelled 0/IsNext or 1/NotNext, P(IsNext) per pair
on the batch engine (softmax of the NSP head's logits; label 0 = IsNext), scikit-learn's metrics."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.evaluate.predict import EvalOptions, Prediction
from bertstudio.core.evaluate.readers import Dataset, EvalColumns, Example, PairFile, read_pairs
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.nsp import (
    IS_NEXT,
    IS_NEXT_NAME,
    NOT_NEXT_NAME,
    NSP_CLASSES,
    NspInput,
    require_nsp_head,
    steps,
)

SENTENCE_A_NAMES = ("sentence_a", "text_a", "sentence1", "first", "a", "text")
SENTENCE_B_NAMES = ("sentence_b", "text_b", "sentence2", "second", "b", "text_pair", "next")
NSP_LABEL_NAMES = ("label", "is_next", "next_label", "labels", "y")
NSP_WORDS = {"0": IS_NEXT_NAME, "isnext": IS_NEXT_NAME, "1": NOT_NEXT_NAME, "notnext": NOT_NEXT_NAME}


def nsp_label(value: Any) -> str | None:
    """'0'/'IsNext' -> IsNext, '1'/'NotNext' -> NotNext (BERT's labels); None for anything else."""
    return NSP_WORDS.get(re.sub(r"[^a-z0-9]", "", str(value).lower()))



NSP_FILE = PairFile(("sentence A", SENTENCE_A_NAMES), ("sentence B", SENTENCE_B_NAMES), ("label", NSP_LABEL_NAMES),
                    nsp_label, "empty sentence A or B", "label '{value}' is not 0/IsNext or 1/NotNext")


def read_file(path: Path, columns: EvalColumns, control: TaskControl | None = None) -> Dataset:
    """inputs = (sentence A, sentence B), gold = IsNext / NotNext (label 0 / 1 as BERT was trained)."""
    return read_pairs(path, columns, control, NSP_FILE)



def predict(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
        options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    """P(IsNext) per pair, as tasks.nsp scores it (softmax of the NSP head's logits; label 0 = IsNext)."""
    import numpy as np

    from bertstudio.core import engine

    require_nsp_head(loaded)
    encoded, found = steps.logits(loaded, [x.inputs for x in examples], control, max_rows=options.batch_size)
    logits = found.astype(np.float64)
    out = []
    for p in (steps.read(loaded, logits)[:, IS_NEXT].tolist() if len(logits) else []):
        label = IS_NEXT_NAME if p >= 0.5 else NOT_NEXT_NAME
        out.append(Prediction(label, label, p if label == IS_NEXT_NAME else 1.0 - p, (1.0 - p, p), NSP_CLASSES))
    return out, engine.cut_note(loaded, encoded, [x.line for x in examples])



def inputs_of(example: Example) -> NspInput:
    return NspInput(example.inputs[0], (example.inputs[1],))
