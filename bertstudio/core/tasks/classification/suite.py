"""What behavioural suites (core/suites) need of classification: a case as Evaluate's rows hold it.
Its failures are labelled table rows (core/suites/fix.py), so it declares no format of its own."""

from __future__ import annotations


def text_and_pair(case: tuple[str, ...]) -> tuple[str, str | None]:
    return (case[0], case[1] if len(case) > 1 else None)
