"""A pinned input and an edit of it, explained with the same method and the same target, and the
difference of their attributions token by token.

The edit is explained for the pinned input's answer (its target), so both rows say how much each
token pushed towards the same thing and the difference is comparable. The tokens are aligned with
difflib's matching blocks: a token in both gets edit - pinned; a token only in the pinned input was
removed or replaced (its push is lost: 0 - pinned), one only in the edit was added (edit - 0).
Where the edit's task has no such target (NER's token, QA's span moved), the edit is explained for
its own answer and a note says the difference mixes targets.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from bertstudio.core import notes
from bertstudio.core.errors import InputError
from bertstudio.core.explain.attribution import Explanation, explain
from bertstudio.core.explain.methods import DEFAULT_SAMPLES, DEFAULT_SEED, INTEGRATED_GRADIENTS, label
from bertstudio.core.explain.share import Share
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl


@dataclass(frozen=True)
class Aligned:
    """One token of the aligned pair: its value in the pinned input (None: not there) and in the edit."""

    token: str
    pinned: float | None
    edit: float | None
    special: bool = False

    @property
    def difference(self) -> float:
        """edit - pinned, a missing side counting 0 (a removed token's push is lost, an added one's gained)."""
        return (self.edit or 0.0) - (self.pinned or 0.0)


@dataclass(frozen=True)
class PinnedPair:
    pinned: Explanation
    edit: Explanation
    aligned: tuple[Aligned, ...]
    name: str  # the method as a person reads it
    notes: tuple[Note, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"method": self.name, "pinned": self.pinned.to_json(), "edit": self.edit.to_json(),
                "aligned": [{"token": a.token, "pinned": a.pinned, "edit": a.edit, "difference": a.difference}
                            for a in self.aligned],
                "notes": [n.to_json() for n in self.notes]}


def align(pinned: Explanation, edit: Explanation) -> tuple[Aligned, ...]:
    """The two token sequences merged in order: kept tokens once (both values), removed then added ones."""
    out: list[Aligned] = []
    matcher = SequenceMatcher(a=list(pinned.tokens), b=list(edit.tokens), autojunk=False)
    for kind, a0, a1, b0, b1 in matcher.get_opcodes():
        if kind == "equal":
            out += [Aligned(pinned.tokens[a0 + k], pinned.attributions[a0 + k], edit.attributions[b0 + k],
                            pinned.special[a0 + k]) for k in range(a1 - a0)]
            continue
        out += [Aligned(pinned.tokens[i], pinned.attributions[i], None, pinned.special[i]) for i in range(a0, a1)]
        out += [Aligned(edit.tokens[j], None, edit.attributions[j], edit.special[j]) for j in range(b0, b1)]
    return tuple(out)


def explain_pinned(loaded: LoadedModel, task: str, pinned: tuple[str, ...], edit: tuple[str, ...],
                   method: str = INTEGRATED_GRADIENTS, steps: int = 50, samples: int = DEFAULT_SAMPLES,
                   seed: int = DEFAULT_SEED, baseline: str = "pad", control: TaskControl | None = None) -> PinnedPair:
    """Both inputs explained (the edit for the pinned input's target), and their aligned difference."""
    control = control or TaskControl()
    name = label(method, baseline)
    first = explain(loaded, task, pinned, method, None, steps, control=Share(control, 0.0, 0.5, "Pinned: "),
                    samples=samples, seed=seed, baseline=baseline)
    found: list[Note] = []
    second_control = Share(control, 0.5, 1.0, "Edit: ")
    try:
        second = explain(loaded, task, edit, method, str(first.target), steps, control=second_control,
                         samples=samples, seed=seed, baseline=baseline)
    except InputError:
        second = explain(loaded, task, edit, method, None, steps, control=second_control, samples=samples,
                         seed=seed, baseline=baseline)
        found.append(notes.info(f"The edit has no target “{first.target_label}”: it is explained for its own "
                                f"answer “{second.target_label}”, so the difference mixes two targets."))
    control.report("Both explained", 1.0)
    return PinnedPair(first, second, align(first, second), name, notes.unique([*first.notes, *second.notes, *found]))
