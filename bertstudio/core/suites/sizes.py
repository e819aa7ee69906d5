"""A suite's size, counted from its JSON before a single case is built: a suite of millions of
cases is refused in well under a second, and the hint names the test and the field that make them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.suites.templates import MAX_SUITE_CHARS, TemplateError, count_cases


def planned_cases(raw: Any, masks: Mapping[str, Sequence[str]] | None = None) -> tuple[int, str]:
    """(how many cases a test's JSON would make, the field they come from), counted without making
    them: the fill lists' sizes (a `{mask}` takes its chosen words, else one), inputs or pairs, times
    `samples` when perturbed. Read leniently: 0 for what the reader will refuse anyway."""
    if not isinstance(raw, Mapping):
        return 0, ""
    samples = raw.get("samples", 1) if "perturb" in raw else 1
    samples = samples if isinstance(samples, int) and not isinstance(samples, bool) and samples > 0 else 1
    for field_name in ("inputs", "pairs"):
        if isinstance(raw.get(field_name), list):
            return len(raw[field_name]) * samples, field_name
    template, fill = raw.get("template"), raw.get("fill", {})
    templates = [template] if isinstance(template, str) else template
    if not isinstance(templates, list) or not all(isinstance(t, str) for t in templates) or not isinstance(
            fill, Mapping):
        return 0, ""
    name = raw.get("name", "")
    words = (masks or {}).get(name.strip() if isinstance(name, str) else "", ("",))
    sizes = {key: value for key, value in fill.items() if isinstance(value, list)}
    try:
        return count_cases(templates, {"mask": words, **sizes}) * samples, "fill"
    except TemplateError:
        return 0, ""


def planned_chars(raw: Any) -> int:
    """About how many characters a perturbed test's inputs make: the given inputs' (or pairs') length
    times `samples` (a perturbation changes a few words, not the length); 0 where `planned_cases` counts."""
    if not isinstance(raw, Mapping) or "perturb" not in raw:
        return 0
    samples = raw.get("samples", 1)
    samples = samples if isinstance(samples, int) and not isinstance(samples, bool) and samples > 0 else 1
    items = raw.get("inputs")
    return samples * sum(_chars(item) for item in (items if isinstance(items, list) else []))


def _chars(item: Any) -> int:
    """The characters of one input: a text, or the texts of a list of parts."""
    if isinstance(item, str):
        return len(item)
    return sum(len(part) for part in item if isinstance(part, str)) if isinstance(item, list) else 0


def refuse_too_many(tests: list[Any], source: str, cap: int, masks: Mapping[str, Sequence[str]] | None) -> None:
    """A suite over cap refused before expansion, naming its largest test and what to shorten."""
    chars = sum(planned_chars(raw) for raw in tests)
    if chars > MAX_SUITE_CHARS:
        raise InputError(f"{source} would make about {chars:,} characters of perturbed inputs, more than "
                         f"{MAX_SUITE_CHARS:,}.", hint="Lower 'samples' or give shorter or fewer inputs.")
    planned = [planned_cases(raw, masks) for raw in tests]
    total = sum(count for count, _field in planned)
    if total <= cap:
        return
    largest = max(range(len(tests)), key=lambda i: planned[i][0])
    count, field_name = planned[largest]
    raw = tests[largest]
    name = raw.get("name") if isinstance(raw.get("name"), str) else f"test {largest + 1}"
    shorten = {"fill": "its fill lists", "inputs": "its inputs", "pairs": "its pairs"}[field_name]
    if "perturb" in raw and raw.get("samples", 1) != 1:
        shorten += " or its 'samples'"
    raise InputError(f"{source} makes {total:,} cases, more than the {cap:,} a suite may have.",
                     hint=f"The largest test, '{name}', makes {count:,}: shorten {shorten}, or split the suite.")
