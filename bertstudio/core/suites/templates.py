"""Templates with slots: "The {thing} was {bad}." filled from lists, every combination (CheckList's
`editor.template`). Slots are plain `{name}`; `{{` and `}}` are literal braces.

Templates are read with `string.Formatter().parse` and filled by plain concatenation, never by
`str.format`: a format spec (`{x:>300000000}`), a conversion (`{x!r}`), an attribute or an index
would make `format` build arbitrarily large strings or read attributes, so each is refused. The
cases a template makes are counted, and the longest input it can make is measured, from the fill
lists before a single case is built.
"""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Mapping, Sequence

MAX_EXPANSION = 20_000  # cases one template may make: a typo in a list must not make millions
MAX_INPUT_CHARS = 100_000  # characters of one generated or given input (a model reads ~512 tokens)
MAX_SUITE_CHARS = 50_000_000  # characters of all the inputs a suite makes (cases x their length), in memory at once

Piece = tuple[str, str | None]  # literal text, then the slot that follows it (None at the end)


class TemplateError(ValueError):
    """What is wrong with a template or its fill lists (the suite reader names the test)."""


def _pieces(template: str) -> list[Piece]:
    """The template as (literal, slot) pieces; anything but a plain `{name}` slot is refused."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as error:
        raise TemplateError(f"the template cannot be read ({error}); write a slot as {{name}}") from None
    pieces: list[Piece] = []
    for text, name, spec, conversion in parsed:
        if name is not None:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            if spec or conversion:
                raise TemplateError(f"the slot '{shown[:60]}' has a format spec or conversion; "
                                    "write a slot as {name}")
            if not name.isidentifier():
                raise TemplateError(f"the slot '{shown[:60]}' is not a name; write a slot as {{name}}")
        pieces.append((text, name))
    return pieces


def slots(template: str) -> list[str]:
    """The slot names of a template, in order of first use."""
    return list(dict.fromkeys(name for _text, name in _pieces(template) if name is not None))


def count_cases(templates: Sequence[str], fill: Mapping[str, Sequence[object]]) -> int:
    """How many cases `expand` would make (the product of the used lists' sizes), without making them."""
    names = dict.fromkeys(name for template in templates for name in slots(template))
    return math.prod(len(fill.get(name, ())) for name in names)


def _longest(pieces: list[Piece], fill: Mapping[str, Sequence[str]]) -> int:
    return sum(len(text) + (max(map(len, fill[name])) if name is not None else 0) for text, name in pieces)


def _filled(pieces: list[Piece], values: Mapping[str, str]) -> str:
    return "".join(text + (values[name] if name is not None else "") for text, name in pieces)


def expand(templates: Sequence[str], fill: Mapping[str, Sequence[str]]) -> list[tuple[str, ...]]:
    """Every combination of the fill words put in the slots of all the templates at once (the
    parts of one case and its expected answer share slots: "Where does {name} live?", "{name}")."""
    parsed = [_pieces(template) for template in templates]
    names = list(dict.fromkeys(name for pieces in parsed for _text, name in pieces if name is not None))
    missing = [name for name in names if name not in fill]
    if missing:
        raise TemplateError(f"the slot '{{{missing[0]}}}' has no list in 'fill'")
    unused = [name for name in fill if name not in names]
    if unused:
        raise TemplateError(f"'fill' has a list for '{unused[0]}', which the template does not use")
    empty = [name for name in names if not fill[name]]
    if empty:
        raise TemplateError(f"the list for '{{{empty[0]}}}' in 'fill' is empty")
    total = count_cases(templates, fill)
    if total > MAX_EXPANSION:
        raise TemplateError(f"the fill lists make {total:,} cases, more than the {MAX_EXPANSION:,} one template "
                            "may make; shorten them")
    longest = max(_longest(pieces, fill) for pieces in parsed)
    if longest > MAX_INPUT_CHARS:
        raise TemplateError(f"the template can make an input of {longest:,} characters, more than "
                            f"{MAX_INPUT_CHARS:,}; shorten it or its fill words")
    if total * longest * len(parsed) > MAX_SUITE_CHARS:
        raise TemplateError(f"the template makes {total:,} cases of up to {longest:,} characters, more than "
                            f"{MAX_SUITE_CHARS:,} characters in all; shorten the fill lists or the words")
    out = []
    for words in itertools.product(*(fill[name] for name in names)):
        values = dict(zip(names, words, strict=True))
        out.append(tuple(_filled(pieces, values) for pieces in parsed))
    return out
