"""What a model load is asked for and what it gives: the request (also the cache key), the head
report, the plain-valued info the UI shows, and the model in memory."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from bertstudio.core.tasks.spec import spec_for

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

@dataclass(frozen=True)
class LoadRequest:
    """Everything that decides which weights end up in memory: also the cache key."""

    source: str
    task: str
    device: str = "cpu"
    dtype: str = "float32"
    attn_implementation: str | None = None  # "eager" where attention weights are shown
    quantize: str | None = None  # "int8": dynamic int8 quantization after loading (CPU only; core/quantize.py)
    runtime: str = "torch"  # "onnx": an exported .onnx on ONNX Runtime's CPU provider (core/export/onnx_runtime.py)

    def __post_init__(self) -> None:
        spec_for(self.task)  # an unknown task is a programming error: fail at once


@dataclass(frozen=True)
class HeadReport:
    """Weights the task's model class wanted and the checkpoint did not have (newly initialised)."""

    missing: tuple[str, ...] = ()
    unexpected: tuple[str, ...] = ()
    mismatched: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()  # also newly initialised, but the task never reads them (its spec says so)
    # Every weight is there, but the head was trained for another task (anatomy.checkpoint's judgement,
    # the models list's): what it was saved as and serves, "ModernBertForSequenceClassification (classification)".
    trained_as: str = ""

    @property
    def complete(self) -> bool:
        return not self.missing and not self.mismatched and not self.trained_as

    def warning(self, task: str) -> str:
        if self.complete:
            return ""
        if not self.missing and not self.mismatched:
            return (f"This checkpoint has no trained {task} head: it was saved as {self.trained_as}. Its weights "
                    f"load, but they were never trained for {task}, so the results will be meaningless until "
                    "the head is trained for it.")
        names = ", ".join((self.missing + self.mismatched)[:6])
        more = len(self.missing) + len(self.mismatched) - 6
        return (
            f"This checkpoint has no trained {task} head: {len(self.missing) + len(self.mismatched)} weight "
            f"tensors were newly initialised at random ({names}{f', +{more} more' if more > 0 else ''}). "
            "Results will be meaningless until the head is trained."
        )


@dataclass(frozen=True)
class ModelInfo:
    """What the UI shows about a loaded model: plain values, safe to send across threads."""

    request: LoadRequest
    folder: str
    architecture: str
    model_type: str
    parameters: int
    layers: int | None
    heads: int | None
    hidden_size: int | None
    vocab_size: int
    max_length: int
    mask_token: str | None
    special_tokens: tuple[str, ...]
    head_report: HeadReport
    id2label: dict[int, str] = field(default_factory=dict)
    size_mb: float = 0.0  # the state in memory (int8 weights one byte each)
    quantized: str = ""  # what quantizing did (engine, layers, MB before and after); "" when not quantized

    @property
    def head_warning(self) -> str:
        return self.head_report.warning(self.request.task)


@dataclass
class LoadedModel:
    """A model and its tokenizer in memory. Stays in worker threads; the GUI sees only `info`."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    info: ModelInfo
    # One job at a time per model: fast tokenizers are not thread-safe, torch uses every core.
    lock: threading.RLock = field(default_factory=threading.RLock)
    extras: dict[str, Any] = field(default_factory=dict)  # per-task helpers, e.g. a pipeline

    def pipeline(self, task: str) -> Any:
        """transformers' pipeline for `task` ("fill-mask", ...) on this model, built on first use."""
        key = f"pipeline:{task}"
        if key not in self.extras:
            import logging

            from transformers import pipeline

            checks = logging.getLogger("transformers.pipelines.base")  # "model 'OnnxModule' is not supported":
            level = checks.level  # an exported model runs its steps all the same (core/export/onnx_runtime.py)
            if self.info.request.runtime == "onnx":
                checks.setLevel(logging.CRITICAL)
            try:
                self.extras[key] = pipeline(  # type: ignore[call-overload]
                    task, model=self.model, tokenizer=self.tokenizer, device=self.model.device
                )
            finally:
                checks.setLevel(level)
        return self.extras[key]
