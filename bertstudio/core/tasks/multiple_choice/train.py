"""Multiple choice: a prompt, any number of choices and the correct one's index, from the table
Evaluate reads (prompt, choice0..choiceN or ending0.., label), fine-tuned with
AutoModelForMultipleChoice (one score per prompt+choice pair, softmax over the choices).

Examples may have different numbers of choices: the collator pads a batch to its largest
number with empty choices (all padding, attention off). An empty choice is never the answer,
and validation takes the argmax over each question's real choices only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.readers import EvalColumns
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.multiple_choice import CHOICE_COLUMN, MAX_CHOICES
from bertstudio.core.tasks.multiple_choice.evaluate import read_file
from bertstudio.core.training import data as data_mod
from bertstudio.core.training import metrics as metrics_mod
from bertstudio.core.training.base import Config, Data, TrainableTask, load_model_class, train_and_validation

HEADER_BYTES = 1 << 20  # the header read to count choice columns before any row is read


def check_choice_columns(path: Path) -> None:
    """The header's numbered choice columns, bounded before a row is read: more than MAX_CHOICES (the
    most this app scores at once) is refused, and so is a single one (a question needs two choices)."""
    from bertstudio.core.datafiles import first_line_header

    header = first_line_header(path, HEADER_BYTES)
    numbered = [(name, found) for name in header if (found := CHOICE_COLUMN.match(name))]
    if len(numbered) > MAX_CHOICES:
        raise InputError(f"{path.name} has {len(numbered):,} choice columns; multiple choice trains on at most "
                         f"{MAX_CHOICES} choices per question.",
                         hint=f"Keep each question's choices in at most {MAX_CHOICES} columns (choice0, choice1…).")
    if len(numbered) == 1 and "choices" not in header:
        name, stem = numbered[0][0], numbered[0][1].group(1)
        raise InputError(f"{path.name} has one choice column ('{name}'): a multiple-choice question needs at "
                         "least two choices.",
                         hint=f"Put each choice in its own numbered column ({stem}0, {stem}1…).")


def read_choices(path: str) -> list[Any]:
    """Evaluate's reader: every row a prompt, 2..MAX_CHOICES choices and a valid index, or its line is named."""
    from bertstudio.core.files import regular_file

    checked = regular_file(path, "data file")
    check_choice_columns(checked)
    examples = list(read_file(checked, EvalColumns()).examples)  # every column detected
    data_mod.raise_issues(checked, [data_mod.RowIssue(x.line, f"{len(x.inputs[1]):,} choices; at most {MAX_CHOICES} "
                                                              "are trained on per question")
                                    for x in examples if len(x.inputs[1]) > MAX_CHOICES])  # a JSONL "choices" list
    return examples


class ChoiceCollator:
    """Pads every choice of a batch to one length and every question to the batch's most choices."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Any]:
        import torch

        counts = [len(f["input_ids"]) for f in features]
        keys = [k for k in features[0] if k != "labels"]
        flat = [{k: f[k][j] for k in keys} for f, n in zip(features, counts, strict=True) for j in range(n)]
        padded = self.tokenizer.pad(flat, return_tensors="pt")
        most, length = max(counts), padded["input_ids"].shape[1]
        batch: dict[str, Any] = {}
        for key, values in padded.items():
            filler = self.tokenizer.pad_token_id if key == "input_ids" else 0
            out = torch.full((len(features), most, length), filler or 0, dtype=values.dtype)
            at = 0
            for row, n in enumerate(counts):
                out[row, :n] = values[at:at + n]
                at += n
            batch[key] = out
        if "labels" in features[0]:
            batch["labels"] = torch.tensor([f["labels"] for f in features], dtype=torch.long)
        return batch


def choice_accuracy(counts: Sequence[int]) -> metrics_mod.Metrics:
    """Accuracy of the argmax over each question's own choices (padding choices left out)."""
    import numpy as np

    def compute(pred: Any) -> dict[str, float]:
        logits = np.asarray(pred.predictions[0] if isinstance(pred.predictions, tuple) else pred.predictions)
        gold = np.asarray(pred.label_ids)
        picked = np.array([int(np.argmax(row[:n])) for row, n in zip(logits, counts, strict=True)])
        return {"accuracy": float((picked == gold).mean())}

    return compute


def keep_logits(logits: Any, _labels: Any) -> Any:
    """The scores stay whole: the argmax is taken over the real choices only (see choice_accuracy)."""
    return logits


class MultipleChoice(TrainableTask):
    key: ClassVar[str] = "choice"  # the choice spec's CLI name, as `evaluate --task` says (test_task_packages)
    order = 50
    title = "Multiple choice (prompt, choices, correct index)"
    demo_files = ("choice_train.csv", "choice_eval.csv")
    auto_class = "AutoModelForMultipleChoice"

    def read(self, config: Config, nsp: bool = True) -> Data:
        rows, evaluation = train_and_validation(config, read_choices)
        if len(rows) < 2:
            raise InputError("Multiple choice needs at least two training questions.")
        counts = sorted({len(x.inputs[1]) for x in rows})
        notes = (f"Questions have {counts[0]} to {counts[-1]} choices; shorter ones are padded with empty "
                 "choices that are never the answer.",) if len(counts) > 1 else ()
        return Data(rows, evaluation, [], notes)

    def load(self, folder: Any, config: Config, labels: list[str], tokenizer: Any) -> tuple[Any, bool]:
        import transformers

        # a sequence classifier's `classifier` has a row per label; the choice head has one: a new head
        return load_model_class(transformers.AutoModelForMultipleChoice, folder, ignore_mismatched_sizes=True), False

    def encode(self, tokenizer: Any, rows: Any, labels: list[str], max_length: int,
               nsp: bool, control: TaskControl | None = None) -> tuple[list[dict[str, Any]], list[int]]:
        """Each choice after its prompt as a text pair; a feature holds all of one question's pairs."""
        firsts = [x.inputs[0] for x in rows for _ in x.inputs[1]]
        seconds = [c for x in rows for c in x.inputs[1]]
        encoded = tokenizer(firsts, seconds, truncation=True, max_length=max_length)
        full = [len(ids) for ids in tokenizer(firsts, seconds)["input_ids"]]
        features, lengths, at = [], [], 0
        for x in rows:
            n = len(x.inputs[1])
            feature = {key: encoded[key][at:at + n] for key in encoded}
            feature["labels"] = int(x.gold)
            features.append(feature)
            lengths.append(max(full[at:at + n]))
            at += n
        return features, lengths

    def collator(self, tokenizer: Any) -> Any:
        return ChoiceCollator(tokenizer)

    def evaluation(self, data: Data, eval_rows: list[dict[str, Any]], nsp: bool) -> tuple[metrics_mod.Metrics, Any]:
        return choice_accuracy([len(row["input_ids"]) for row in eval_rows]), keep_logits
