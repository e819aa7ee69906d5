"""What the Tests tab's shown suite results were computed from (issue 29): the model, the suite
(its file and the ticked `{mask}` words), the data file, the held-apart and held-out settings and
the compared model, as one comparable value taken at Run. No Qt here.

The results stay on screen when the tab now says otherwise (they are a record of that run); the
Out-of-date mark names what differs ("suite", "model"...).
"""

from __future__ import annotations

from dataclasses import dataclass

from bertstudio.core.models import LoadRequest
from bertstudio.ui.tabs.tab_state import RunState

NAMES = {"suite": "suite", "masks": "{mask} words", "data": "data file", "held_apart": "held-apart setting",
         "held_out": "held-out file"}  # what the Out-of-date mark calls each field of SuiteInputs


@dataclass(frozen=True)
class SuiteInputs:
    """The suite run's inputs beside its model (RunState.model) and compared model (RunState.compare)."""

    suite: str  # the suite file
    masks: tuple[tuple[str, tuple[str, ...]], ...]  # test -> the `{mask}` words ticked, sorted
    data: str  # the training data "Fine-tune on failures" adds to
    held_apart: bool  # judged on the held-apart halves only
    held_out: str  # the held-out file evaluated before and after a fix


def suite_inputs(suite: str, ticked: dict[str, list[str]], data: str, held_apart: bool,
                 held_out: str) -> SuiteInputs:
    masks = tuple(sorted((name, tuple(words)) for name, words in ticked.items()))
    return SuiteInputs(suite, masks, data.strip(), held_apart, held_out.strip())


def suite_origin(model: LoadRequest | None, inputs: SuiteInputs, compare: str | None) -> RunState:
    return RunState(model, inputs, (), compare or None)
