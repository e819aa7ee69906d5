"""Dynamic int8 quantization of a loaded model: torch's own `quantize_dynamic` on every nn.Linear.

Weights are stored as int8 (a scale per output channel); activations are quantized on the fly
per batch, so no calibration data is needed. It runs on the CPU only (torch's quantized kernels:
the x86/fbgemm engine on Intel and AMD, qnnpack on ARM). A quantized model is a variant of a
source, never a file: `LoadRequest.quantize` asks for it, and a compared model names it with
`variant_source` ("SRC [int8]"), the one notation the tabs, the CLI and the JSON share.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import DeviceError, InputError

QUANTIZE_CHOICES = ("int8",)
_MARK = " [{}]"  # "SRC [int8]": a compared model that is the quantized variant of SRC


@dataclass(frozen=True)
class Quantized:
    """What quantizing did: the engine, how many layers, and the state's size before and after."""

    engine: str
    layers: int
    float_mb: float
    int8_mb: float

    @property
    def text(self) -> str:
        return (f"int8 dynamic quantization ({self.engine} engine): {self.layers} linear layers, "
                f"{self.float_mb:.1f} MB -> {self.int8_mb:.1f} MB; embeddings and LayerNorm stay float32.")


def check_quantize(quantize: str | None, device: str) -> None:
    """An unknown variant, or int8 on a GPU (torch's dynamic int8 kernels are CPU-only), is refused."""
    if quantize is None:
        return
    if quantize not in QUANTIZE_CHOICES:
        raise InputError(f"Unknown quantization '{quantize}'.", hint=f"Choose one of: {', '.join(QUANTIZE_CHOICES)}.")
    if not (device or "cpu").strip().lower().startswith("cpu"):
        raise DeviceError(f"int8 dynamic quantization runs on the CPU only, not on {device}.",
                          hint="Choose the cpu device for int8, or float16/bfloat16 on the GPU.")


def variant_source(source: str, quantize: str | None) -> str:
    """'SRC [int8]' for the quantized variant of SRC; SRC itself when not quantized."""
    return source + _MARK.format(quantize) if quantize else source


def split_variant(text: str) -> tuple[str, str | None]:
    """('SRC', 'int8') from 'SRC [int8]'; a folder that really has that name stays a plain source."""
    for choice in QUANTIZE_CHOICES:
        mark = _MARK.format(choice)
        if text.endswith(mark) and not Path(text).expanduser().exists():
            return text[: -len(mark)].strip(), choice
    return text, None


def state_mb(model: Any) -> float:
    """Megabytes of the model's state: int8 weights count one byte each (packed params included)."""
    import torch

    def size(value: Any) -> int:
        if isinstance(value, torch.Tensor):
            return value.numel() * value.element_size()
        if isinstance(value, tuple | list):
            return sum(size(item) for item in value)
        return 0

    return sum(size(value) for value in model.state_dict().values()) / 1e6


def quantize_int8(model: Any) -> tuple[Any, Quantized]:
    """The model with every nn.Linear replaced by torch's dynamic int8 Linear (in place, on the CPU)."""
    import torch

    before = state_mb(model)
    engine = torch.backends.quantized.engine
    if engine == "none" or engine not in torch.backends.quantized.supported_engines:
        raise DeviceError("This torch build has no quantized CPU engine, so int8 quantization is not available.")
    layers = sum(isinstance(module, torch.nn.Linear) for module in model.modules())
    with warnings.catch_warnings():
        # torch 2.10+ marks torch.ao.quantization deprecated (in favour of torchao) but still ships
        # and runs it; the warning is torch's to give, not a problem with the user's model.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        # one scale per output row (not per matrix): on the trained MiniLM sentiment head this keeps
        # top-1 agreement at 99.7 % over the 300 demo reviews, where per-tensor scales reach 99.0 %
        quantized = quantize_dynamic(model.to("cpu").eval(), {torch.nn.Linear: per_channel_dynamic_qconfig},
                                     dtype=torch.qint8, inplace=True)
    return quantized, Quantized(engine, layers, before, state_mb(quantized))


def compare_request(request: Any, compare_source: str) -> Any:
    """The LoadRequest of a compared model: 'SRC [int8]' is SRC quantized, on the CPU where int8 runs."""
    from dataclasses import replace

    source, quantize = split_variant(compare_source)
    if quantize is None:  # the compared model on PyTorch: `--runtime onnx --compare SRC` sets the two side by side
        return replace(request, source=source, quantize=None, runtime="torch")
    return replace(request, source=source, quantize=quantize, device="cpu", dtype="float32", runtime="torch")


def size_speed_note(a: Any, b: Any, a_seconds: float, b_seconds: float) -> str:
    """'Size and time of this run: A: 90.9 MB, 41 ms; B (int8): 58.6 MB, 22 ms ...' for two ModelInfos."""
    def one(name: str, info: Any, seconds: float) -> str:
        kind = f" ({info.request.quantize})" if info.request.quantize else ""
        return f"{name}{kind}: {info.size_mb:.1f} MB, {seconds * 1000:.0f} ms"

    return (f"Size and time of this run: {one('A', a, a_seconds)}; {one('B', b, b_seconds)} (one run, a model's "
            "first includes its warm-up; Evaluate and bench/bench_int8.py time many rows).")


def refuse_for_gradients(request: Any, what: str) -> None:
    """Explain and head importance follow gradients, which torch's int8 layers do not pass back."""
    if getattr(request, "runtime", "torch") == "onnx":
        raise InputError(f"{what} follows gradients and layers; the exported ONNX file runs whole forwards only.",
                         hint="Load the model folder on PyTorch (device cpu) to explain it.")
    if getattr(request, "quantize", None):
        raise InputError(f"{what} follows gradients, which do not flow through int8 layers.",
                         hint="Choose float32 for this model to explain it; compare the int8 variant's predictions "
                              "in the task tab or in Evaluate.")
