"""Field metadata that generates both the `train` CLI options and the Train form.

`Option` is the metadata of one dataclass field; `opt()` makes such a field; `options(cls)`
lists them. Range checks come from the same metadata, so the CLI, the form and validation agree.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from bertstudio.core.errors import InputError


@dataclass(frozen=True)
class Option:
    """How one config field is offered: CLI flag, form label and widget, allowed range."""

    help: str
    flag: str | None = None  # None: not a CLI option of its own
    label: str = ""
    widget: str = ""  # text, model, file, folder, int, float, choice, check, device
    low: float | None = None
    high: float | None = None
    low_open: bool = False  # the low bound itself is not allowed
    high_open: bool = False
    choices: tuple[str, ...] = ()
    decimals: int = 0
    step: float = 1.0
    group: str = "Run"
    required: bool = False  # the CLI must be given it
    exclusive: str = ""  # CLI options sharing this name are mutually exclusive
    metavar: str | None = None

    def range_text(self) -> str:
        low = "" if self.low is None else ("> " if self.low_open else ">= ") + f"{self.low:g}"
        high = "" if self.high is None else ("< " if self.high_open else "<= ") + f"{self.high:g}"
        return " and ".join(x for x in (low, high) if x)

    def check(self, name: str, value: Any) -> None:
        """Refuse NaN, infinities and values outside the range, naming the setting."""
        if self.choices and value not in self.choices:
            raise InputError(f"Unknown {self.label or name} '{value}'.",
                             hint=f"Choose one of {', '.join(self.choices)}.")
        if isinstance(value, bool) or not isinstance(value, int | float):
            return
        where = f"{self.label or name}" + (f" ({self.flag})" if self.flag else "")
        if not math.isfinite(value):
            raise InputError(f"{where} must be a finite number, not {value}.", hint=f"Use a value {self.range_text()}.")
        too_low = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        too_high = self.high is not None and (value >= self.high if self.high_open else value > self.high)
        if too_low or too_high:
            raise InputError(f"{where} is {value:g}; it must be {self.range_text()}.")


def opt(default: Any, **metadata: Any) -> Any:
    """A dataclass field with its Option."""
    return field(default=default, metadata={"option": Option(**metadata)})


def options(cls: type) -> list[tuple[str, Option, Any]]:
    """(field name, Option, default) for every field of `cls` that has an Option, in order."""
    out = []
    for item in fields(cls):
        option = item.metadata.get("option")
        if option is not None:
            default = item.default if item.default is not MISSING else None
            out.append((item.name, option, default))
    return out
