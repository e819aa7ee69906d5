"""Multiple choice (SWAG-style): a prompt and 2..N endings, the probability of each ending.

There is no transformers pipeline for it, so we keep the pipeline's three steps: preprocess
(the prompt paired with every ending, shaped 1 x choices x tokens), forward
(AutoModelForMultipleChoice), postprocess (softmax over the choices).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bertstudio.core import engine, execution
from bertstudio.core import notes as _notes
from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.multiple_choice import steps
from bertstudio.core.text_limits import require_text

if TYPE_CHECKING:
    from bertstudio.core.compare import RankingDiff

MAX_CHOICES = 64

# The column names a table's choices go by (choice0, ending_1, option 2...): Evaluate's reader and
# training read the same ones.
CHOICE_COLUMN = re.compile(r"^(choice|ending|option|answer|sol)[_ ]?(\d+)$", re.IGNORECASE)


@dataclass(frozen=True)
class ChoiceInput:
    prompt: str
    choices: tuple[str, ...]


@dataclass(frozen=True)
class ChoiceScore:
    choice: str
    score: float  # softmax over the choices
    logit: float
    index: int  # position in the order the user gave

    def to_json(self) -> dict[str, object]:
        return {"choice": self.choice, "score": self.score}


@dataclass(frozen=True)
class ChoiceResult:
    prompt: str
    choices: tuple[ChoiceScore, ...]  # best first
    truncated: bool = False

    @property
    def best(self) -> ChoiceScore:
        return self.choices[0]

    @property
    def notes(self) -> tuple[Note, ...]:
        if not self.truncated:
            return ()
        return (_notes.warning("Prompt and ending were longer than the model reads; they were cut to fit."),)

    def to_json(self) -> list[dict[str, object]]:
        return [c.to_json() for c in self.choices]


def parse_choices(text: str) -> list[str]:
    """Endings typed one per line."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def preprocess(loaded: LoadedModel, prompt: str, choices: Sequence[str]) -> tuple[dict[str, Any], bool]:
    """The prompt paired with each ending, as tensors of shape (1, choices, tokens) on the model's device."""
    limit = loaded.info.max_length
    prompts = [prompt] * len(choices)
    truncated = any(execution.too_long(loaded, prompts, list(choices)))
    encoded = loaded.tokenizer(
        prompts, list(choices), padding=True, truncation=True if truncated else False,
        max_length=limit if truncated else None, return_tensors="pt",
    )
    return engine.on_device(loaded.model, {name: tensor.unsqueeze(0) for name, tensor in encoded.items()}), truncated


def predict(loaded: LoadedModel, prompt: str, choices: Sequence[str]) -> ChoiceResult:
    """Softmax over the endings' logits; errors a user understands for input that cannot work."""
    require_text(prompt, "prompt")
    choices = [c.strip() for c in choices]
    if any(not c for c in choices):
        raise InputError("One of the endings is empty.", hint="Type one ending per line.")
    if len(choices) < 2:
        raise InputError(
            "Multiple choice needs at least two endings.", hint="Type two or more endings, one per line."
        )
    if len(choices) > MAX_CHOICES:
        raise InputError(f"{len(choices)} endings are more than the {MAX_CHOICES} this app scores at once.")
    import numpy as np

    from bertstudio.core import engine

    # read(forward(encode(pairs))): each (prompt, ending) a row of the batch engine
    encoded = steps.encode(loaded, [(prompt, choice) for choice in choices])
    logits = np.asarray(engine.run(loaded, encoded, steps.forward(loaded.model), progress=False), np.float32)
    probabilities, truncated = steps.read(loaded, logits), bool(encoded.cut)
    scored = [
        ChoiceScore(choice, float(p), float(z), i)
        for i, (choice, p, z) in enumerate(zip(choices, probabilities.tolist(), logits.tolist(), strict=True))
    ]
    scored.sort(key=lambda c: c.score, reverse=True)
    return ChoiceResult(prompt, tuple(scored), truncated)


def compare(a: ChoiceResult, b: ChoiceResult) -> RankingDiff:
    """How model B ranks the same endings differently (core.compare.RankingDiff)."""
    from bertstudio.core.compare import compare_rankings

    return compare_rankings(a.choices, b.choices)


def run(loaded: LoadedModel, inputs: ChoiceInput, control: TaskControl) -> ChoiceResult:
    return predict(loaded, inputs.prompt, inputs.choices)
