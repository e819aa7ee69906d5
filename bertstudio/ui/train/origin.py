"""What a Train run was started from (issue 29): the task, base model (or from scratch), the data
files, the folder it wrote and the other settings, as one frozen value taken at Start.

The shown result keeps the value of the run that made it: "Evaluate…" and "Open in…" hand over
that run's folder, task and data, never what the form says now; the Out-of-date mark names what the
form now would do differently ("output folder", "base model"...). No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.models import LoadRequest
from bertstudio.ui.tabs.tab_state import RunState

FROM_SCRATCH = "(from scratch)"  # the base model of a run that built its own vocabulary and weights
# settings outside `settings`: their own fields, or one-shot choices that do not change what is trained
NOT_SETTINGS = frozenset({"task", "model", "train_file", "eval_file", "output_dir", "overwrite", "resume"})
NAMES = {"task": "task", "base": "base model", "train_file": "training file", "eval_file": "validation file",
         "output_dir": "output folder", "settings": "settings"}


@dataclass(frozen=True)
class TrainInputs:
    """One run's origin: comparable and hashable (the workspace export writes it as JSON)."""

    task: str
    base: str  # the base model's source, FROM_SCRATCH for a from-scratch run
    train_file: str
    eval_file: str
    output_dir: str  # the folder the run wrote ("" in the form: a new folder would be proposed)
    settings: tuple[tuple[str, str], ...]  # every other setting (name, value as text), sorted


def inputs_of(task: str, from_scratch: bool, form_state: dict[str, Any], columns: tuple[str, ...],
              output_dir: str) -> TrainInputs:
    """The origin from the form's values (`form_state`: ConfigForm.state()), the chosen columns and
    the folder that is (or would be) written."""
    settings = {k: repr(v) for k, v in form_state.items() if k not in NOT_SETTINGS}
    settings["columns"] = repr(columns)
    settings["from_scratch"] = repr(from_scratch)
    if not from_scratch:  # the size of a new model is no setting of a fine-tune
        for name in ("vocab_size", "layers", "hidden", "hidden_size", "heads", "ffn", "intermediate_size"):
            settings.pop(name, None)
    return TrainInputs(task=task, base=FROM_SCRATCH if from_scratch else str(form_state.get("model", "")),
                       train_file=str(form_state.get("train_file", "")),
                       eval_file=str(form_state.get("eval_file", "")),
                       output_dir=output_dir, settings=tuple(sorted(settings.items())))


def run_state(inputs: TrainInputs | None, app_task: str) -> RunState | None:
    """The origin as the tabs' RunState: model = the base (a from-scratch run: none, its size is in
    the settings), inputs = the whole frozen value."""
    if inputs is None:
        return None
    model = None if inputs.base == FROM_SCRATCH or not inputs.base else LoadRequest(inputs.base, app_task)
    return RunState(model, inputs, (), None)


def origin_line(inputs: TrainInputs) -> str:
    """"Run of <base> on <file> → <folder>": which run the shown result belongs to."""
    base = (Path(inputs.base).name or inputs.base or "no base model" if inputs.base != FROM_SCRATCH
            else "a new model (from scratch)")
    return f"Run of {base} on {Path(inputs.train_file).name} → {inputs.output_dir}"
