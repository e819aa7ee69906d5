"""Head importance (Michel, Levy & Neubig 2019, "Are Sixteen Heads Really Better than One?").

A gate of 1 multiplies each head's slice of the attention output (the hook that switches heads
off, ablation.head_gates); a head's importance is |d loss / d gate| summed over the inputs. The
loss is the task's own: cross-entropy against the gold label when the data has one, else
against the model's own prediction (-log F of the default target; token classification: the
mean cross-entropy of every token against its predicted tag). As in the paper, importance is
normalised per layer by its L2 norm unless asked not to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bertstudio.core import engine
from bertstudio.core.errors import InputError
from bertstudio.core.explain.ablation import head_gates, head_layout
from bertstudio.core.explain.targets import Prepared, prepare
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl

MAX_EXAMPLES = 10_000


@dataclass(frozen=True)
class Example:
    texts: tuple[str, ...]  # as targets.prepare takes them for the task
    label: str | None = None  # the gold target, when the data has one


@dataclass(frozen=True)
class HeadImportance:
    task: str
    importance: tuple[tuple[float, ...], ...]  # layers x heads
    normalization: str  # "per-layer L2" or "none"
    examples: int
    loss: str  # what was differentiated
    notes: tuple[Note, ...] = ()

    def least_important(self, k: int) -> tuple[tuple[int, int], ...]:
        """The k heads with the smallest importance, as (layer, head), least first."""
        ranked = sorted((value, layer, head) for layer, row in enumerate(self.importance)
                        for head, value in enumerate(row))
        return tuple((layer, head) for _, layer, head in ranked[:max(0, k)])

    def to_json(self) -> dict[str, object]:
        return {"importance": [list(row) for row in self.importance], "normalization": self.normalization,
                "examples": self.examples, "loss": self.loss, "notes": [n.to_json() for n in self.notes]}


def head_importance(
    loaded: LoadedModel,
    task: str,
    examples: Sequence[Example],
    normalize: bool = True,
    control: TaskControl | None = None,
) -> HeadImportance:
    """|d loss / d gate| per head, accumulated over `examples` (see module docstring)."""
    import torch

    control = control or TaskControl()
    if not examples:
        raise InputError("Head importance needs at least one input.", hint="Give INPUTs or --data FILE.")
    if len(examples) > MAX_EXAMPLES:
        raise InputError(f"{len(examples)} inputs are more than the {MAX_EXAMPLES} used at once.")
    model = loaded.model
    layout = head_layout(model)
    total = torch.zeros(layout.layers, layout.heads, device=model.device)
    gold = any(e.label is not None for e in examples)
    loss_name = "cross-entropy against the gold labels" if gold else ""
    with engine.exclusive(loaded, grad=True):  # one input at a time: |d loss / d gate| is summed per input
        gates = torch.ones(layout.layers, layout.heads, device=model.device, requires_grad=True)
        for number, example in enumerate(examples, start=1):
            control.check()
            prepared = prepare(loaded, task, example.texts, example.label)
            with head_gates(model, gates):
                outputs = model(**prepared.inputs)
            if prepared.loss is not None and example.label is None:
                loss = prepared.loss(outputs)
                loss_name = loss_name or prepared.loss_name
            elif prepared.target_label.startswith("value of"):  # a regression head: its value
                loss = prepared.probability(outputs).sum()
            else:
                loss = -torch.log(prepared.probability(outputs).clamp_min(1e-12)).sum()
            (grad,) = torch.autograd.grad(loss, gates)
            total += grad.abs()
            control.report(f"Head importance: input {number} of {len(examples)}", number / len(examples))
    if normalize:
        total = total / total.norm(dim=-1, keepdim=True).clamp_min(1e-20)
    loss_name = loss_name or Prepared.loss_name  # the class default: -log F of the model's own prediction
    return HeadImportance(task, tuple(tuple(float(v) for v in row) for row in total.cpu()),
                          "per-layer L2" if normalize else "none", len(examples), loss_name)


def read_examples(path: str | Path, task: str) -> list[Example]:
    """Inputs from a file: the task's own reader where its spec names one (classification: a
    CSV/TSV, see its `examples`); else one input per line, its parts separated by tabs (nsp: A, B;
    qa: question, context; multiple-choice: prompt, ending, ending...)."""
    from bertstudio.core.tasks.spec import ExplainAdapter, adapter_for

    path = Path(path)
    reader = adapter_for(task, ExplainAdapter).examples
    if reader is not None:
        return list(reader(path))
    from bertstudio.core.datafiles import read_lines  # special files, size and rows bounded

    examples = [Example(tuple(part.strip() for part in line.split("\t"))) for _, line in read_lines(path, "data file")]
    if not examples:
        raise InputError(f"'{path}' holds no inputs.", hint="Write one input per line (parts separated by tabs).")
    return examples
