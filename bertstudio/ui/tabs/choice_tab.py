"""Multiple-choice tab: a prompt and 2..N endings (one per line) -> each ending's probability.

Optionally a second model scores the same endings in the same worker job, side by side.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QVBoxLayout

from bertstudio.core.jobs import Outcome
from bertstudio.core.tasks.multiple_choice import ChoiceInput, parse_choices
from bertstudio.resources import resource_path
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.compare_panel import CompareBars
from bertstudio.ui.widgets.forms import text_box


def example_blocks() -> list[tuple[str, list[str]]]:
    """resources/examples/choice.txt: blocks of a prompt line and its ending lines."""
    text = resource_path("examples", "choice.txt").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    blocks, current = [], []
    for line in lines + [""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            blocks.append((current[0], current[1:]))
            current = []
    return blocks


class ChoiceTab(TaskTab):
    SPEC_KEY = "multiple-choice"
    BOUND = {"prompt": "prompt", "endings": "endings"}  # the workspace binds these by name
    RUN_LABEL = "Score endings"

    def build_inputs(self, box: QVBoxLayout) -> None:
        self.prompt = text_box("The prompt (context), e.g. “She opened the fridge, took out the milk and”", 70)
        self.endings = text_box("Candidate endings, one per line (two or more)", 110)
        box.addWidget(QLabel("Prompt:"))
        box.addWidget(self.prompt)
        box.addWidget(QLabel("Endings (one per line):"))
        box.addWidget(self.endings)

    def build_results(self, box: QVBoxLayout) -> None:
        self.bars = CompareBars()
        box.addWidget(self.bars, 1)

    def examples(self) -> list[tuple[str, Any]]:
        return [(prompt, ChoiceInput(prompt, tuple(endings))) for prompt, endings in example_blocks()]

    def inputs(self) -> ChoiceInput:
        return ChoiceInput(self.prompt.toPlainText(), tuple(parse_choices(self.endings.toPlainText())))

    def set_inputs(self, inputs: ChoiceInput) -> None:
        self.prompt.setPlainText(inputs.prompt)
        self.endings.setPlainText("\n".join(inputs.choices))

    def clear_result(self) -> None:
        self.bars.show_one([], [])

    def show_outcome(self, outcome: Outcome) -> None:
        result = outcome.result
        labels, values = [c.choice for c in result.choices], [c.score for c in result.choices]
        if outcome.second is None:
            self.bars.show_one(labels, values, [f"{c.choice}: p={c.score:.4f} logit={c.logit:.4f}"
                                                for c in result.choices])
        else:
            self.bars.show_two(
                self.source_a(outcome), outcome.second_source, (labels, values),
                ([c.choice for c in outcome.second.choices], [c.score for c in outcome.second.choices]),
                outcome.diff,
            )
        self.status.emit(f"Multiple choice: best ending “{result.best.choice}” ({result.best.score:.1%})")
