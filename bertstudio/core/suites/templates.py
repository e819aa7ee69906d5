"""Templates with slots: "The {thing} was {bad}." filled from lists, every combination (CheckList's
`editor.template`). Slots are `{name}`; `{{` and `}}` are literal braces."""

from __future__ import annotations

import itertools
import string
from collections.abc import Mapping, Sequence

MAX_EXPANSION = 20_000  # cases one template may make: a typo in a list must not make millions


class TemplateError(ValueError):
    """What is wrong with a template or its fill lists (the suite reader names the test)."""


def slots(template: str) -> list[str]:
    """The slot names of a template, in order of first use."""
    try:
        names = [name for _text, name, _spec, _conv in string.Formatter().parse(template) if name is not None]
    except ValueError as error:
        raise TemplateError(f"the template cannot be read ({error}); write a slot as {{name}}") from None
    bad = [name for name in names if not name.isidentifier()]
    if bad:
        raise TemplateError(f"the slot '{{{bad[0]}}}' is not a name; write a slot as {{name}}")
    return list(dict.fromkeys(names))


def expand(templates: Sequence[str], fill: Mapping[str, Sequence[str]]) -> list[tuple[str, ...]]:
    """Every combination of the fill words put in the slots of all the templates at once (the
    parts of one case and its expected answer share slots: "Where does {name} live?", "{name}")."""
    names = list(dict.fromkeys(name for template in templates for name in slots(template)))
    missing = [name for name in names if name not in fill]
    if missing:
        raise TemplateError(f"the slot '{{{missing[0]}}}' has no list in 'fill'")
    unused = [name for name in fill if name not in names]
    if unused:
        raise TemplateError(f"'fill' has a list for '{unused[0]}', which the template does not use")
    empty = [name for name in names if not fill[name]]
    if empty:
        raise TemplateError(f"the list for '{{{empty[0]}}}' in 'fill' is empty")
    total = 1
    for name in names:
        total *= len(fill[name])
        if total > MAX_EXPANSION:
            raise TemplateError(f"the fill lists make more than {MAX_EXPANSION:,} cases; shorten them")
    out = []
    for words in itertools.product(*(fill[name] for name in names)):
        values = dict(zip(names, words, strict=True))
        out.append(tuple(template.format(**values) for template in templates))
    return out
