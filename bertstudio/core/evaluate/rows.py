"""A dataset row as its task's input, so the error browser can open it in the task's own tab."""

from __future__ import annotations

from typing import Any

from bertstudio.core.evaluate.readers import Example


def row_inputs(task: str, example: Example) -> Any:
    """The spec's input dataclass for one evaluated row (what that task's tab `set_inputs` takes)."""
    if task == "classification":
        from bertstudio.core.tasks.classification import ClassificationInput

        text, pair = example.inputs
        return ClassificationInput(text, pair or None)
    if task == "ner":
        from bertstudio.core.tasks.ner import NerInput

        return NerInput(" ".join(example.inputs))
    if task == "qa":
        from bertstudio.core.tasks.qa import QAInput

        return QAInput(*example.inputs)
    if task == "nsp":
        from bertstudio.core.tasks.nsp import NspInput

        return NspInput(example.inputs[0], (example.inputs[1],))
    if task == "multiple-choice":
        from bertstudio.core.tasks.multiple_choice import ChoiceInput

        return ChoiceInput(example.inputs[0], tuple(example.inputs[1]))
    from bertstudio.core.tasks.fill_mask import FillMaskInput

    return FillMaskInput(str(example.inputs))
