"""What each model weighs and how fast it reads the same rows: parameters, size on disk, size in
memory, rows per second of the whole prediction (Evaluate's run) and of the forward passes alone
(the CKA pass: both models, the same rows, the same batches of the batch engine).

An int8 variant exists in memory only (core/quantize.py): its size on disk is None.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bertstudio.core.models import ModelInfo

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".onnx", ".h5", ".msgpack")


def disk_mb(folder: str | Path) -> float | None:
    """The weight files of a model folder in MB (config and tokenizer files are a few kB); None if absent."""
    path = Path(folder)
    if not path.is_dir():
        return None
    sizes = [f.stat().st_size for f in path.iterdir() if f.is_file() and f.name.endswith(WEIGHT_SUFFIXES)]
    return sum(sizes) / 2**20 if sizes else None


@dataclass(frozen=True)
class ModelSize:
    parameters: int
    disk_mb: float | None  # None: an in-memory variant (int8), or no weight files found
    memory_mb: float

    def to_json(self) -> dict[str, Any]:
        return {"parameters": self.parameters, "disk_mb": self.disk_mb, "memory_mb": self.memory_mb}


def model_size(info: ModelInfo) -> ModelSize:
    on_disk = None if info.request.quantize else disk_mb(info.folder)
    return ModelSize(info.parameters, on_disk, info.size_mb)


@dataclass(frozen=True)
class ModelSpeed:
    rows: int
    predict_seconds: float  # Evaluate's prediction of every row (tokenizing, batches, post-processing)
    forward_rows: int
    forward_seconds: float  # the hidden-states forward passes of the CKA rows

    @property
    def rows_per_second(self) -> float | None:
        return self.rows / self.predict_seconds if self.predict_seconds > 0 else None

    @property
    def forward_rows_per_second(self) -> float | None:
        return self.forward_rows / self.forward_seconds if self.forward_seconds > 0 else None

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "rows_per_second": self.rows_per_second,
                "forward_rows": self.forward_rows, "forward_rows_per_second": self.forward_rows_per_second}


def ratio(a: float | None, b: float | None) -> float | None:
    """b / a, where both are known and a is not 0 (B's size or speed as a multiple of A's)."""
    return b / a if a and b is not None else None
