"""Where activations are read and replaced, per architecture: forward hooks only, removed on exit.

Two kinds of site, in transformers' own indexing:
- "state" l (0..L): the residual stream, `hidden_states[l]`: the input of the l-th layer call for
  l < L (0 = what the embeddings hand the encoder: ALBERT's `embedding_hidden_mapping_in` and
  ELECTRA's `embeddings_project` included), the output of the last call for l = L (before a final
  norm, where a pre-LN encoder such as ModernBERT has one);
- "context" l: the heads' values concatenated, the input of layer l's attention output projection
  (the site `explain.ablation` gates heads at): head h is the h-th slice of its last dimension.
ALBERT calls one shared layer L times, so a pre-hook on the encoder restarts a call counter and each
call is the next layer (the same trick as explain.ablation); other models count the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bertstudio.core.anatomy.modules import anatomy

STATE = "state"
CONTEXT = "context"
# visit(kind, level, tensor) -> a replacement tensor, or None to leave it as it is
Visitor = Callable[[str, int, Any], Any]


@dataclass(frozen=True)
class Sites:
    """A model's layer calls and attention output projections, and its layers x heads shape."""

    layers: int
    heads: int
    encoder: Any  # its forward starts a new count of layer calls
    blocks: tuple[Any, ...]  # the layer modules (ALBERT: the shared one(s))
    projections: tuple[Any, ...]  # the attention output projections (ALBERT: the shared one(s))

    @property
    def levels(self) -> int:
        """How many hidden states there are (embeddings' output + one per layer)."""
        return self.layers + 1


def sites(model: Any) -> Sites:
    """The patchable sites of an encoder, through its anatomy (any architecture in its table)."""
    parts = anatomy(model)
    return Sites(parts.calls, parts.heads, parts.encoder, tuple(layer.block for layer in parts.layers),
                 tuple(layer.output for layer in parts.layers))


def _first(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return args[0] if args else kwargs["hidden_states"]


@contextmanager
def visiting(model: Any, visit: Visitor) -> Iterator[Sites]:
    """Every state and context of each forward pass goes through `visit` while the block runs."""
    found = sites(model)
    counts = {"block": 0, "projection": 0}
    handles: list[Any] = []

    def restart(_module: Any, _args: Any) -> None:
        counts["block"] = counts["projection"] = 0

    def before_block(_module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        level = counts["block"]
        counts["block"] += 1
        new = visit(STATE, level, _first(args, kwargs))
        if new is None:
            return None
        if args:
            return (new, *args[1:]), kwargs
        return args, {**kwargs, "hidden_states": new}

    def after_block(_module: Any, _args: Any, output: Any) -> Any:
        if counts["block"] != found.layers:  # only the last layer call's output is a state of its own
            return None
        hidden = output[0] if isinstance(output, tuple) else output
        new = visit(STATE, found.layers, hidden)
        if new is None:
            return None
        return (new, *output[1:]) if isinstance(output, tuple) else new

    def before_projection(_module: Any, args: tuple[Any, ...]) -> Any:
        level = counts["projection"]
        counts["projection"] += 1
        new = visit(CONTEXT, level, args[0])
        return None if new is None else (new, *args[1:])

    try:
        handles.append(found.encoder.register_forward_pre_hook(restart))
        for block in dict.fromkeys(found.blocks):
            handles.append(block.register_forward_pre_hook(before_block, with_kwargs=True))
            handles.append(block.register_forward_hook(after_block))
        for projection in dict.fromkeys(found.projections):
            handles.append(projection.register_forward_pre_hook(before_projection))
        yield found
    finally:
        for handle in handles:
            handle.remove()


@dataclass
class Recording:
    """The states ((L + 1) tensors, rows x tokens x hidden) and contexts (L tensors) of one run."""

    states: list[Any]
    contexts: list[Any]


@contextmanager
def recording(model: Any, keep_graph: bool = False) -> Iterator[Recording]:
    """Keep every state and context of the forward passes run in the block (the last pass wins).
    `keep_graph`: keep the tensors themselves (attribution patching takes gradients at them)."""
    found = sites(model)
    seen = Recording([None] * found.levels, [None] * found.layers)

    def keep(kind: str, level: int, tensor: Any) -> Any:
        if kind == STATE and level == 0 and keep_graph and not tensor.requires_grad:
            tensor = tensor.detach().requires_grad_(True)  # frozen weights: the graph starts here
            seen.states[0] = tensor
            return tensor
        value = tensor if keep_graph else tensor.detach().clone()
        (seen.states if kind == STATE else seen.contexts)[level] = value
        return None

    with visiting(model, keep):
        yield seen


@dataclass(frozen=True)
class Copy:
    """Copy source rows/positions of the clean activation into destination rows/positions of the
    batch, at one site; `heads` (one per pair) limits each copy to that head's slice."""

    kind: str
    level: int
    destination_rows: Any  # (n,) long tensors
    destination_positions: Any
    source_rows: Any
    source_positions: Any
    heads: Any = None  # (n,) long tensor, or None for the whole vector


def patched(model: Any, clean: Recording, copies: list[Copy], head_count: int, widen_at: int | None = None,
            batch: int = 1) -> Any:
    """A context manager running the block's forward passes with `copies` applied.

    `widen_at`: the forward pass is fed one corrupted input and its state `widen_at` is repeated into
    `batch` copies there: every copy is the same corrupted run before its first patch, so the layers
    below run once for all (exact: the same numbers, computed once)."""
    by_site: dict[tuple[str, int], list[Copy]] = {}
    for item in copies:
        by_site.setdefault((item.kind, item.level), []).append(item)

    def patch(kind: str, level: int, tensor: Any) -> Any:
        wanted = by_site.get((kind, level))
        widen = kind == STATE and level == widen_at
        if not wanted and not widen:
            return None
        result = tensor.repeat(batch, *[1] * (tensor.dim() - 1)) if widen else tensor.clone()
        source = (clean.states if kind == STATE else clean.contexts)[level]
        for item in wanted or ():
            values = source[item.source_rows, item.source_positions].to(result.dtype)
            if item.heads is None:
                result[item.destination_rows, item.destination_positions] = values
                continue
            width = result.shape[-1] // head_count
            split = result.view(*result.shape[:-1], head_count, width)
            own = values.view(values.shape[0], head_count, width)[item.heads.new_tensor(range(len(values))), item.heads]
            split[item.destination_rows, item.destination_positions, item.heads] = own
        return result

    return visiting(model, patch)


@contextmanager
def noised(model: Any, noise: Any) -> Iterator[None]:
    """Add `noise` (rows x tokens x embedding width, zero where nothing is corrupted) to the word
    embeddings of every forward pass in the block; a batch of copies gets it on each copy."""
    module = model.get_input_embeddings()

    def add(_module: Any, _args: Any, output: Any) -> Any:
        rows = noise.shape[0]
        copies = output.shape[0] // rows
        return (output.view(copies, rows, *output.shape[1:]) + noise.to(output.dtype)).view(output.shape)

    handle = module.register_forward_hook(add)
    try:
        yield
    finally:
        handle.remove()
