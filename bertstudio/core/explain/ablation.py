"""Switch attention heads off, as `head_mask = 0` did before transformers 5 removed it.

A head is switched off by zeroing its slice of the attention output (the heads' values,
concatenated) right before the output projection: a forward pre-hook on that projection, which
the model's anatomy (core/anatomy) finds for every architecture. The same hook multiplies by
learnable gates for head importance (Michel et al. 2019), so ablation and importance touch the
model in one way.

ALBERT shares one layer module across all layers, so its hook cannot tell the layer from the
module: a pre-hook on the encoder resets a call counter, and each call of the shared projection
is the next layer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bertstudio.core.anatomy.modules import anatomy
from bertstudio.core.heads import check_range


@dataclass(frozen=True)
class HeadLayout:
    """Where a model's attention output projections are, and its layer x head shape."""

    layers: int
    heads: int
    projections: tuple[Any, ...]  # one module per layer, or ALBERT's shared module(s)
    shared_by: Any = None  # ALBERT: the encoder whose forward starts a new count of layer calls


def head_layout(model: Any) -> HeadLayout:
    """The attention output projections of an encoder, first layer first (ALBERT: the shared ones)."""
    parts = anatomy(model)
    return HeadLayout(parts.calls, parts.heads, tuple(layer.output for layer in parts.layers),
                      shared_by=parts.encoder if parts.shared else None)


def check_heads(layout: HeadLayout, heads: tuple[tuple[int, int], ...]) -> None:
    """InputError naming the valid range for the first head that does not exist."""
    check_range(heads, layout.layers, layout.heads)


@contextmanager
def head_gates(model: Any, gates: Any) -> Iterator[HeadLayout]:
    """Multiply each head's slice of the attention output by gates[layer, head] (a layers x heads
    tensor; zeros switch heads off, ones with requires_grad measure importance). Hooks are removed
    on exit, also when the body raises."""
    layout = head_layout(model)
    if tuple(gates.shape) != (layout.layers, layout.heads):
        raise ValueError(f"gates must be {layout.layers} x {layout.heads}, not {tuple(gates.shape)}")
    handles: list[Any] = []
    calls = [0]

    def gate(layer: int, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        hidden = inputs[0]
        shape = hidden.shape
        scaled = hidden.view(*shape[:-1], layout.heads, shape[-1] // layout.heads)
        scaled = scaled * gates[layer].to(hidden.dtype).view(layout.heads, 1)
        return (scaled.view(shape), *inputs[1:])

    try:
        if layout.shared_by is None:
            for index, module in enumerate(layout.projections):
                handles.append(module.register_forward_pre_hook(
                    lambda _module, inputs, index=index: gate(index, inputs)))
        else:
            def restart(_module: Any, _inputs: Any) -> None:
                calls[0] = 0

            def shared(_module: Any, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
                layer = calls[0]
                calls[0] += 1
                return gate(layer, inputs)

            handles.append(layout.shared_by.register_forward_pre_hook(restart))
            handles += [module.register_forward_pre_hook(shared) for module in layout.projections]
        yield layout
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def heads_switched_off(model: Any, heads: tuple[tuple[int, int], ...]) -> Iterator[None]:
    """The model with these (layer, head) pairs switched off (0-based) while the block runs."""
    import torch

    layout = head_layout(model)
    check_heads(layout, heads)
    if not heads:
        yield
        return
    parameter = next(model.parameters())
    mask = torch.ones(layout.layers, layout.heads, device=parameter.device)
    for layer, head in heads:
        mask[layer, head] = 0.0
    with head_gates(model, mask):
        yield
