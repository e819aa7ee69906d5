"""Evaluate for Multiple choice: a table of prompts, choice columns and the correct index; every
prompt-ending pair on the batch engine, a softmax over each prompt's endings; accuracy."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bertstudio.core.datafiles import tick
from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.predict import EvalOptions, Prediction
from bertstudio.core.evaluate.readers import (
    Dataset,
    EvalColumns,
    Example,
    extra_fields,
    finish_dataset,
    pick_column,
    table_rows,
)
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.multiple_choice import CHOICE_COLUMN, MAX_CHOICES, ChoiceInput, steps

PROMPT_NAMES = ("prompt", "question", "startphrase", "sentence", "context", "goal", "text")
CHOICE_LABEL_NAMES = ("label", "answer", "correct", "answer_index", "target", "labels")


def choice_columns(header: Sequence[str], given: Sequence[str], path: Path) -> tuple[str, ...]:
    if given:
        for name in given:
            pick_column(header, name, (), "choice", path)
        return tuple(given)
    numbered = sorted((int(m.group(2)), h) for h in header if (m := CHOICE_COLUMN.match(h)))
    if len(numbered) == 1 and "choices" not in header:  # issue 32 #13c: "no choice columns" was untrue
        raise InputError(f"{path.name} has one choice column ('{numbered[0][1]}'): a multiple-choice question "
                         "needs at least two choices.", hint="Add the other choices (choice1, choice2…).")
    if not numbered and "choices" not in header:
        raise InputError(f"{path.name} has no choice columns (choice0, choice1… or ending0, ending1…).",
                         hint="Name them with the choice-columns option.")
    return tuple(h for _, h in numbered) or ("choices",)



def read_file(path: Path, columns: EvalColumns, control: TaskControl | None = None) -> Dataset:
    """inputs = (prompt, choices), gold = the correct choice's 0-based index."""
    from bertstudio.core.training.data import RowIssue

    header, rows = table_rows(path, control)
    choices = choice_columns(header, columns.choices, path)
    label = pick_column(header, columns.label, CHOICE_LABEL_NAMES, "label", path, choices)
    prompt = pick_column(header, columns.prompt or columns.text, PROMPT_NAMES, "prompt", path, (*choices, label))
    examples, issues = [], []
    for line, row in rows:
        tick(control, line)
        text = str(row.get(prompt) or "").strip()
        listed = row.get("choices") if choices == ("choices",) else [row.get(c) for c in choices]
        options = tuple(str(c).strip() for c in (listed if isinstance(listed, list) else []) if str(c or "").strip())
        raw = str(row.get(label, "")).strip()
        if not text or len(options) < 2:
            issues.append(RowIssue(line, "needs a prompt and at least two choices"))
        elif not raw.lstrip("-").isdigit() or not 0 <= int(raw) < len(options):
            issues.append(RowIssue(line, f"label '{raw}' is not a choice index 0..{len(options) - 1}"))
        else:
            extra = extra_fields(row, (prompt, label, *choices))
            examples.append(Example(line, text, (text, options), int(raw), extra))
    return finish_dataset(path, examples, issues, (prompt, label, *choices), header)



def predict(loaded: LoadedModel, examples: Sequence[Example], control: TaskControl,
           options: EvalOptions) -> tuple[list[Prediction], list[Any]]:
    """The prompt paired with each ending, every pair of the file through the batch engine in one run
    (a choice head scores each row on its own: (1, rows, tokens) in, one logit per row out); a
    softmax over each prompt's endings, as tasks.multiple_choice.predict."""
    import numpy as np


    widest = max((len(x.inputs[1]) for x in examples), default=0)
    if widest > MAX_CHOICES:
        raise InputError(f"{widest} endings are more than the {MAX_CHOICES} this app scores at once.")
    owner = [n for n, x in enumerate(examples) for _ in x.inputs[1]]
    encoded, found = steps.logits(loaded, [(x.inputs[0], c) for x in examples for c in x.inputs[1]], control,
                                  max_rows=options.batch_size)
    logits = np.asarray(found, np.float64)
    out, start = [], 0
    for example in examples:
        z = logits[start:start + len(example.inputs[1])]
        start += len(z)
        p = steps.read(loaded, z)
        best = int(p.argmax())
        out.append(Prediction(best, f"{best}: {example.inputs[1][best]}", float(p[best])))
    cut = len({owner[i] for i in encoded.cut})
    return out, [f"{cut} row(s) were longer than the model reads and were cut."] if cut else []



def inputs_of(example: Example) -> ChoiceInput:
    return ChoiceInput(example.inputs[0], tuple(example.inputs[1]))


def pair_of(example: Example) -> tuple[str, str | None]:
    return str(example.inputs[0]), None


def shown_gold(example: Example, prediction: Any) -> str:
    return f"{example.gold}: {example.inputs[1][example.gold]}"
