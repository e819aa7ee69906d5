"""Multiple-choice tab: a prompt and 2..N endings (one per line) -> each ending's probability.

Optionally a second model scores the same endings in the same worker job, side by side.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton

from bertstudio.core.jobs import Outcome
from bertstudio.core.models import LoadRequest
from bertstudio.core.progress import TaskControl
from bertstudio.resources import resource_path
from bertstudio.ui.tabs.base import TaskTab
from bertstudio.ui.widgets.compare_panel import CompareBars, CompareSource


def choice_job(
    request: LoadRequest, prompt: str, choices: list[str], compare_source: str | None, control: TaskControl
) -> Outcome:
    from bertstudio.core.jobs import run_task
    from bertstudio.core.tasks.multiple_choice import compare, predict

    return run_task(request, control, lambda loaded: predict(loaded, prompt, choices), compare_source, compare)


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
    TASK = "multiple-choice"
    TITLE = "Multiple choice"
    ORDER = 70

    def build(self) -> None:
        self.outcome: Outcome | None = None
        self.prompt = QPlainTextEdit()
        self.prompt.setPlaceholderText("The prompt (context), e.g. “She opened the fridge, took out the milk and”")
        self.prompt.setMaximumHeight(70)
        self.endings = QPlainTextEdit()
        self.endings.setPlaceholderText("Candidate endings, one per line (two or more)")
        self.endings.setMaximumHeight(110)
        self.examples = QComboBox()
        self.examples.addItem("Examples…")
        for prompt, endings in example_blocks():
            self.examples.addItem(prompt, (prompt, endings))
        self.examples.activated.connect(self._example_chosen)
        self.compare_source = CompareSource(self.model_bar.source)
        self.run_button = QPushButton("Score endings")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: self.runner.cancel())
        self.bars = CompareBars()
        controls = QHBoxLayout()
        controls.addWidget(self.examples)
        controls.addWidget(self.compare_source, 1)
        controls.addWidget(self.run_button)
        controls.addWidget(self.cancel_button)
        self.body.addWidget(QLabel("Prompt:"))
        self.body.addWidget(self.prompt)
        self.body.addWidget(QLabel("Endings (one per line):"))
        self.body.addWidget(self.endings)
        self.body.addLayout(controls)
        self.body.addWidget(self.bars, 1)
        self.runner.started.connect(lambda: self.cancel_button.setEnabled(True))
        self.runner.finished.connect(lambda: self.cancel_button.setEnabled(False))
        self.runner.result.connect(self.show_result)
        self.runner.cancelled.connect(lambda: self.show_message("Cancelled."))

    def _example_chosen(self, index: int) -> None:
        data = self.examples.itemData(index)
        if data:
            self.prompt.setPlainText(data[0])
            self.endings.setPlainText("\n".join(data[1]))
        self.examples.setCurrentIndex(0)

    def run(self) -> None:
        from bertstudio.core.tasks.multiple_choice import parse_choices

        compare_source = self.compare_source.source()
        if self.compare_source.enabled.isChecked() and not compare_source:
            self.show_message("Choose the second model to compare with, or untick “Compare with…”.", error=True)
            return
        self.run_job(choice_job, self.prompt.toPlainText(), parse_choices(self.endings.toPlainText()),
                     compare_source)

    def show_result(self, outcome: Outcome) -> None:
        self.outcome = outcome
        result = outcome.result
        labels, values = [c.choice for c in result.choices], [c.score for c in result.choices]
        if outcome.second is None:
            self.bars.show_one(labels, values, [f"{c.choice}: p={c.score:.4f} logit={c.logit:.4f}"
                                                for c in result.choices])
        else:
            request = self.model_request()
            self.bars.show_two(
                request.source if request else "A", outcome.second_source, (labels, values),
                ([c.choice for c in outcome.second.choices], [c.score for c in outcome.second.choices]),
                outcome.diff,
            )
        notes = [n.text for n in outcome.notes]
        self.show_message("\n".join(notes))
        self.status.emit(f"Multiple choice: best ending “{result.best.choice}” ({result.best.score:.1%})")
