"""One parameter count for every place that shows one: unique tensors.

`sum(p.numel() for p in model.parameters())` depended on how the model came to be (issue 40: the
model bar said 0.8 M for a folder in one session and 0.7 M after a restart, 811,806 vs 735,567):
a masked-LM decoder whose tie to the word embeddings was broken in memory (a merged LoRA head, a
copy) counted the same weights twice, and int8 layers, whose packed weights are no parameters,
counted none. Here a tensor is counted once however many modules share it; an output embedding the
config says is tied to the input embedding counts once even when it is a separate copy; a
dynamically quantized Linear counts its weight and bias as the float layer it replaced.
"""

from __future__ import annotations

from typing import Any


def count_parameters(model: Any) -> int:
    """The model's parameters, each weight once (see the module docstring)."""
    seen: set[int] = set()
    total = 0
    for parameter in model.parameters():  # torch yields a shared Parameter once
        if id(parameter) not in seen:
            seen.add(id(parameter))
            total += parameter.numel()
    tied = _tied_output(model)
    return total - _untied_copy(model, tied) + _packed(model, tied)


def _tied_output(model: Any) -> Any:
    """The output embedding module the config ties to the input embeddings, or None."""
    if not getattr(getattr(model, "config", None), "tie_word_embeddings", False):
        return None
    try:
        return model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        return None


def _untied_copy(model: Any, tied: Any) -> int:
    """The size of a tied output embedding's weight when it is a separate copy of the input one."""
    import torch

    if tied is None:
        return 0
    first, second = getattr(model.get_input_embeddings(), "weight", None), getattr(tied, "weight", None)
    if not isinstance(first, torch.Tensor) or not isinstance(second, torch.Tensor) or first is second:
        return 0
    return int(second.numel()) if first.shape == second.shape else 0


def _packed(model: Any, tied: Any) -> int:
    """Weights and biases of dynamically quantized Linear layers (packed, so no parameters); a tied
    output embedding's packed weight is the input embedding's, counted already."""
    total = 0
    for module in model.modules():
        weight = getattr(module, "weight", None)
        if callable(weight) and type(module).__module__.startswith("torch.ao.nn.quantized"):  # dynamic Linear
            bias = module.bias() if callable(getattr(module, "bias", None)) else None
            shared_bias = module is tied and bias is not None and _kept(model, bias)
            total += (0 if module is tied else int(weight().numel())) + (
                int(bias.numel()) if bias is not None and not shared_bias else 0)
    return total


def _kept(model: Any, value: Any) -> bool:
    """Whether a parameter equal to `value` is still in the model (a decoder bias the head shared)."""
    import torch

    return any(p.shape == value.shape and torch.equal(p.detach(), value.detach()) for p in model.parameters())
