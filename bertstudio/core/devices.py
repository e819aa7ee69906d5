"""Which devices and number formats this machine offers, and turning a user's choice into torch's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bertstudio.core.errors import DeviceError

if TYPE_CHECKING:
    import torch

DTYPES = ("float32", "float16", "bfloat16")


def available_devices() -> list[str]:
    """Devices torch can run on here, CPU first (the safe default)."""
    import torch

    devices = ["cpu"]
    if torch.cuda.is_available():
        devices += [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        devices.append("mps")
    return devices


def dtypes_for(device: str) -> list[str]:
    """Half precision is offered on GPUs only: on CPU it is slow and often unsupported."""
    if device.startswith("cuda"):
        import torch

        index = int(device.split(":")[1]) if ":" in device else 0
        with torch.cuda.device(index):  # is_bf16_supported() asks the current device
            bf16 = torch.cuda.is_bf16_supported()
        return ["float32", "float16"] + (["bfloat16"] if bf16 else [])
    if device == "mps":
        return ["float32", "float16"]
    return ["float32"]


def normalise_device(device: str) -> str:
    """'cuda' means the first GPU; anything unknown is refused with the list of what exists. Every model
    load and training run chooses its device here, so a GPU's attention kernels are settled here too."""
    device = (device or "cpu").strip().lower()
    if device == "cuda":
        device = "cuda:0"
    if device not in available_devices():
        raise DeviceError(
            f"Device '{device}' is not available on this machine.",
            hint=f"Choose one of: {', '.join(available_devices())}.",
        )
    settle_attention_kernels(device)
    return device


def torch_dtype(device: str, dtype: str) -> torch.dtype:
    import torch

    if dtype not in DTYPES:
        raise DeviceError(f"Unknown number format '{dtype}'.", hint=f"Choose one of: {', '.join(DTYPES)}.")
    if dtype not in dtypes_for(device):
        raise DeviceError(
            f"{dtype} is not offered on {device}.",
            hint=f"Use one of: {', '.join(dtypes_for(device))}.",
        )
    return getattr(torch, dtype)


def is_out_of_memory(error: BaseException) -> bool:
    import torch

    return isinstance(error, torch.OutOfMemoryError) or "out of memory" in str(error).lower()


# Whether sdpa may pick cuDNN's attention on a GPU. torch 2.10+ prefers it on Hopper and Blackwell
# (H100, H200, B200) once the bundled cuDNN is new enough (2.11's is), and cuDNN builds a graph for every
# new (rows, width) shape it meets: hundreds of milliseconds each. A run over a review-like mix meets
# tens of widths (26 batches for 4,096 rows), a one-text classify a new width per text, training one per
# padded batch width, so the first pass pays seconds; an issue-39 profile on an H200 found the first sdpa
# calls taking 6.7 s. Flash and memory-efficient attention take any shape warm, and attention is under a
# tenth of a BERT-base forward's FLOPs at these lengths, so little is lost warm. bench/gpu_check.py's
# `tune` stage measures both on the GPU it runs on.
CUDNN_ATTENTION = False


def settle_attention_kernels(device: str) -> None:
    """On a CUDA device, sdpa's choice for this process: cuDNN attention left out unless CUDNN_ATTENTION
    (a process-wide flag of torch's: set, never restored, so two jobs on two threads cannot undo it)."""
    if str(device).startswith("cuda"):
        import torch

        torch.backends.cuda.enable_cudnn_sdp(CUDNN_ATTENTION)
