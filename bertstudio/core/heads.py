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
        pair = (int(layer), int(head))
        if layers is not None and pair[0] >= layers:
            raise InputError(f"Layer {pair[0]} does not exist: the model has layers 0-{layers - 1}.")
        if heads is not None and pair[1] >= heads:
            raise InputError(f"Head {pair[1]} does not exist: each layer has heads 0-{heads - 1}.")
        found.append(pair)
    return tuple(dict.fromkeys(found))


def format_heads(pairs: HeadSet) -> str:
    return ", ".join(f"{layer}:{head}" for layer, head in pairs)
