"""What differs between two runs' settings: their configs flattened to dotted keys (a nested
setting such as distillation's teacher is `distill.teacher`), plus the base model's and the
training data's fingerprints, so "same settings, other data" shows too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MISSING = "(not set)"


@dataclass(frozen=True)
class Difference:
    key: str
    first: str
    second: str


def flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """Dotted key -> the value as short text (numbers as JSON writes them, None as 'null')."""
    if isinstance(value, dict):
        out: dict[str, str] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        if not value and prefix:
            out[prefix] = "{}"
        return out
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return {prefix: text}


def config_diff(first: dict[str, Any], second: dict[str, Any]) -> list[Difference]:
    """Every key whose value differs (or is set in only one), in key order."""
    a, b = flatten(first), flatten(second)
    return [Difference(key, a.get(key, MISSING), b.get(key, MISSING))
            for key in sorted(a.keys() | b.keys()) if a.get(key, MISSING) != b.get(key, MISSING)]


def run_diff(first: Any, second: Any) -> list[Difference]:
    """Two RunRecords: their configs and data fingerprints."""
    return config_diff({**first.config, "data fingerprint": first.data},
                       {**second.config, "data fingerprint": second.data})
