"""Change one hidden state inside the forward pass: what an SAE feature's ablation and a concept's
erasure do to the model's own answer.

`editing(model, level, change)`: while the block runs, hidden_states[level] (0 = the embeddings'
output, the model's last level = its last layer's) is replaced by `change(state)` before the layers
above read it. The sites are core/patching/hooks.py's (found through the model's anatomy, ALBERT's
shared layer counted per call); where a pre-LN encoder normalises after its last layer (ModernBERT),
hidden_states[last] is that norm's output, so the last level is changed there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Change = Callable[[Any], Any]  # a (rows, tokens, d) tensor -> the tensor that replaces it


@contextmanager
def editing(model: Any, level: int, change: Change) -> Iterator[None]:
    from bertstudio.core.anatomy.modules import anatomy
    from bertstudio.core.patching.hooks import STATE, visiting

    parts = anatomy(model)
    if level == parts.calls and parts.final_norm is not None:
        def after_norm(_module: Any, _args: Any, output: Any) -> Any:
            return change(output)

        handle = parts.final_norm.register_forward_hook(after_norm)
        try:
            yield
        finally:
            handle.remove()
        return

    def visit(kind: str, at: int, tensor: Any) -> Any:
        return change(tensor) if kind == STATE and at == level else None

    with visiting(model, visit):
        yield


def feature_change(w_enc: Any, b_enc: Any, w_dec: Any, b_dec: Any, k: int, feature: int, scale: float,
                   positions: Any = None) -> Change:
    """x -> x + (scale - 1) * f_i(x) * W_dec[i]: feature i's part of the reconstruction scaled (0: ablated),
    the SAE's error term left as it is; at every token, or only at `positions` (a bool mask, rows x tokens)."""
    from bertstudio.core.features.sae import encode_torch

    def change(x: Any) -> Any:
        values, ids = encode_torch(x.float(), w_enc, b_enc, b_dec, k)
        value = (values * (ids == feature)).sum(-1, keepdim=True)  # f_i(x): 0 where i is not among the top k
        if positions is not None:
            value = value * positions.unsqueeze(-1).to(value.dtype)
        return (x.float() + (scale - 1.0) * value * w_dec[feature]).to(x.dtype)

    return change
