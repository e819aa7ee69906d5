"""Attention heads named by a person: '0:1, 2:3' -> ((0, 1), (2, 3)), checked against a model.

The CLI's --ablate-heads and the tabs' "Heads off" field read the same text the same way.
"""

from __future__ import annotations

from bertstudio.core.errors import InputError

HeadSet = tuple[tuple[int, int], ...]  # (layer, head) pairs, 0-based


def parse_heads(text: str, layers: int | None = None, heads: int | None = None) -> HeadSet:
    """The pairs in `text` (commas or spaces between them), each once; empty text -> ()."""
    found = []
    for item in text.replace(";", ",").replace(" ", ",").split(","):
        if not item:
            continue
        layer, sep, head = item.partition(":")
        if not sep or not layer.isdigit() or not head.isdigit():
            raise InputError(f"'{item}' is not LAYER:HEAD.", hint="Write 0-based numbers, e.g. 0:3, 2:1.")
        found.append((int(layer), int(head)))
    pairs = tuple(dict.fromkeys(found))
    check_range(pairs, layers, heads)
    return pairs


def check_range(pairs: HeadSet, layers: int | None, heads: int | None) -> None:
    """InputError naming the valid range for the first head that does not exist (None: not known yet)."""
    hint = "Layers and heads are counted from 0 (LAYER:HEAD, e.g. 0:3)."
    for layer, head in pairs:
        if layers is not None and not 0 <= layer < layers:
            raise InputError(f"Layer {layer} does not exist: this model has layers 0-{layers - 1}.", hint=hint)
        if heads is not None and not 0 <= head < heads:
            raise InputError(f"Head {head} does not exist: this model has heads 0-{heads - 1} per layer.",
                             hint=hint)


def format_heads(pairs: HeadSet) -> str:
    return ", ".join(f"{layer}:{head}" for layer, head in pairs)
