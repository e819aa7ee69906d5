"""A task's result in a few lines: head pruning shows the intact and the pruned result side by side.

Each task's spec names its summary (`ExplainAdapter.summary`); the view asks the adapter, so
nothing switches on a task key. A result of an unexpected shape reads as its repr.
"""

from __future__ import annotations

from typing import Any


def fill_mask(result: Any) -> str:
    return "\n".join(f"{c.score:7.2%}  {c.token}" for c in result.masks[0].candidates)


def classification(result: Any) -> str:
    return "\n".join(f"{s.score:7.2%}  {s.label}" for s in result.first.scores)


def multiple_choice(result: Any) -> str:
    return "\n".join(f"{c.score:7.2%}  {c.choice}" for c in result.choices)


def qa(result: Any) -> str:
    return "\n".join(f"{a.score:7.2%}  {a.answer or '(no answer)'}" for a in result.answers)


def ner(result: Any) -> str:
    return "\n".join(f"{e.score:7.2%}  {e.label}  {e.word}" for e in result.entities) or "no entities"


def nsp(result: Any) -> str:
    first = result.results[0] if hasattr(result, "results") else result
    return f"P(IsNext) = {first.is_next:.2%}\nP(NotNext) = {first.not_next:.2%}"
