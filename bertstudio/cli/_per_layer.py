"""fill-mask --per-layer: the model's own MLM head read at every layer (the spec's ExplainAdapter.per_layer).

Kept apart from cli/fill_mask.py so the fill-mask command gains one option, one JSON hook and
one printer call. The runner hands printers the result only; `remember` keeps this command
line's options (one CLI process runs one command).
"""

from __future__ import annotations

import argparse
from typing import Any

_ARGS: dict[str, argparse.Namespace] = {}


def add_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--per-layer", action="store_true",
                        help='also the top-k at every layer (the MLM head on each hidden state; JSON: "layers")')
    parser.add_argument("--tuned-lens", metavar="DIR",
                        help="with --per-layer: also each layer through a tuned lens (`features lens`), beside the "
                             'logit lens, with the KL per layer (JSON: "tuned_layers", "kl_logit_lens", '
                             '"kl_tuned_lens")')


def remember(args: argparse.Namespace) -> None:
    """Called while the inputs are read, before any model is loaded."""
    from bertstudio.core.errors import InputError

    _ARGS.pop("args", None)
    if getattr(args, "tuned_lens", None) and not getattr(args, "per_layer", False):
        raise InputError("--tuned-lens reads the layers: add --per-layer.")
    if getattr(args, "tuned_lens", None):
        from bertstudio.core.features.tuned_lens import load

        load(args.tuned_lens)  # a bad lens folder is said before any model is loaded
    if getattr(args, "per_layer", False):
        if getattr(args, "compare", None):
            raise InputError("--per-layer reads one model's layers; leave out --compare.")
        _ARGS["args"] = args


def layers_for(result: Any) -> Any:
    """The per-layer predictions for the text fill-mask read, on the same (cached) model and heads."""
    from contextlib import nullcontext

    from bertstudio.core import engine
    from bertstudio.core.explain.ablation import heads_switched_off
    from bertstudio.core.explain.inputs import explainable
    from bertstudio.core.models import LoadRequest, load_model

    args = _ARGS["args"]
    spec, per_layer = next((spec, spec.explain.per_layer) for spec in explainable()
                           if spec.explain is not None and spec.explain.per_layer is not None)
    loaded = load_model(LoadRequest(args.model, spec.key, args.device, args.dtype, spec.attn_implementation))
    heads = tuple(getattr(args, "ablate_heads", ()) or ())
    lens = None
    if getattr(args, "tuned_lens", None):
        from bertstudio.core.features.tuned_lens import load

        lens = load(args.tuned_lens)
    with engine.holding(loaded) as model, heads_switched_off(model, heads) if heads else nullcontext():
        return per_layer(loaded, result.text, args.top_k, lens=lens)


def json_result(result: Any, args: argparse.Namespace) -> Any:
    from bertstudio.core.tasks.spec import jsonable

    if not getattr(args, "per_layer", False):
        return jsonable(result)
    layers = layers_for(result)
    found = {"result": jsonable(result), "layers": layers.to_json()}
    if layers.tuned:
        lenses = layers.lens_json()
        found |= {"tuned_layers": lenses["tuned_lens"], "kl_logit_lens": lenses["kl_logit_lens"],
                  "kl_tuned_lens": lenses["kl_tuned_lens"]}
    return found


def print_layers(result: Any) -> None:
    if "args" not in _ARGS:
        return
    layers = layers_for(result)
    for number in range(len(layers.masks)):
        print(f"\nmask {number + 1}, per layer (0 = embeddings):")
        if layers.tuned:
            print(f"  {'':>3}  {'logit lens (KL to the last layer)':<44}tuned lens (KL)")
        for index, layer in enumerate(layers.layers):
            tops = "  ".join(f"{c.token.strip()} {c.score:.0%}" for c in layer[number][:5 if not layers.tuned else 3])
            if layers.tuned:
                tuned = "  ".join(f"{c.token.strip()} {c.score:.0%}" for c in layers.tuned[index][number][:3])
                tops = (f"{tops[:34]:<34} {layers.kl[index][number]:7.3f}  {tuned[:34]:<34} "
                        f"{layers.tuned_kl[index][number]:7.3f}")
            print(f"  {index:>3}  {tops}")
