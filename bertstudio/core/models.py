"""Loading a model for a task (a folder, a Hub id, a LoRA adapter or an exported .onnx) and a bounded cache.

A source is a local folder or a Hugging Face Hub id. Each task needs its own model class
(an MLM head for fill-mask, a QA head for QA...); the head report says which weights of
that class the checkpoint lacked, so random heads are never passed off as results.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core import adapter_folder, devices
from bertstudio.core.anatomy.checkpoint import Judgement
from bertstudio.core.anatomy.families import max_positions
from bertstudio.core.errors import BertStudioError, MissingHeadError, ModelSourceError, OutOfMemory
from bertstudio.core.model_checks import (
    HeadReport,
    adapter_base,
    check_task_supported,
    checkpoint_config,
    head_refused,
    head_report,
    judge_heads,
    model_class,
    quiet_transformers,
    resolve_source,
    tokenizer_for,
)
from bertstudio.core.parameters import count_parameters
from bertstudio.core.progress import TaskControl
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

def _count_layers(config: Any) -> int | None:
    for name in ("num_hidden_layers", "n_layers", "num_layers"):
        if getattr(config, name, None) is not None:
            return int(getattr(config, name))
    return None


def _count_heads(config: Any) -> int | None:
    for name in ("num_attention_heads", "n_heads"):
        if getattr(config, name, None) is not None:
            return int(getattr(config, name))
    return None


def _max_length(tokenizer: Any, config: Any) -> int:
    """The tokenizer's limit if it is a real one, else the model's position embeddings."""
    limit = getattr(tokenizer, "model_max_length", None)
    positions = max_positions(config)  # RoBERTa's and MPNet's positions start after the padding index
    if limit and limit < 1_000_000:
        return int(min(limit, positions)) if positions else int(limit)
    return int(positions or 512)


def _build_info(request: LoadRequest, folder: Path, model: Any, tokenizer: Any, report: HeadReport) -> ModelInfo:
    config = model.config
    id2label = {int(k): str(v) for k, v in (getattr(config, "id2label", None) or {}).items()}
    return ModelInfo(
        request=request,
        folder=str(folder),
        architecture=type(model).__name__,
        model_type=str(config.model_type),
        parameters=count_parameters(model),  # unique tensors: the same count for a tied or untied copy
        layers=_count_layers(config),
        heads=_count_heads(config),
        hidden_size=getattr(config, "hidden_size", None) or getattr(config, "dim", None),
        vocab_size=len(tokenizer),
        max_length=_max_length(tokenizer, config),
        mask_token=tokenizer.mask_token,
        special_tokens=tuple(tokenizer.all_special_tokens),
        head_report=report,
        id2label=id2label,
    )


def in_memory(model: Any, tokenizer: Any, source: str, task: str) -> LoadedModel:
    """A model that was not loaded from a folder (one being trained) as a LoadedModel, so a task's own
    readers run on it exactly as they will on the folder it is saved to (same limits, same windows)."""
    return LoadedModel(model=model, tokenizer=tokenizer,
                       info=_build_info(LoadRequest(source, task), Path(source), model, tokenizer, HeadReport()))


def load_uncached(request: LoadRequest, control: TaskControl | None = None) -> LoadedModel:
    """Load tokenizer and task model on the requested device; explain every way this can fail."""
    control = control or TaskControl()
    if request.runtime == "onnx":
        return _load_onnx(request, control)
    control.report(f"Locating {request.source}…", None)
    adapter = Path(request.source).expanduser().resolve() if adapter_folder.is_adapter_folder(request.source) else None
    folder = adapter_base(adapter, control) if adapter else resolve_source(request.source, control)
    control.check()
    quiet_transformers()
    config = checkpoint_config(folder)  # resolve_source checked the folder: nothing allocated before
    if adapter:  # a LoRA adapter: the base rebuilt with the trained model's labels and head
        config = adapter_folder.head_config(adapter, folder)
    check_task_supported(request.task, config)
    judged = None if adapter else judge_heads(folder)  # the models list's judgement, before any weight is read
    device = devices.normalise_device(request.device)
    dtype = devices.torch_dtype(device, request.dtype)
    from bertstudio.core.quantize import check_quantize

    check_quantize(request.quantize, device)  # int8 on a GPU is refused before the weights are read
    control.report(f"Reading tokenizer of {request.source}…", None)
    tokenizer = tokenizer_for(adapter_folder.tokenizer_folder(adapter, folder), folder, config)
    control.check()
    control.report(f"Loading weights of {request.source}…", None)
    try:
        model, loading_info = _read_weights(request, folder, adapter, config, device, dtype, control)
    except BertStudioError:
        raise
    except Exception as error:
        raise _load_failure(request, device, judged, error) from error
    model.eval()
    check_config = spec_for(request.task).check_config
    if check_config is not None:  # a head the task cannot read (BERT's QA class takes 5 labels; DistilBERT's refuses)
        check_config(model.config, request.source)
    report = head_report(loading_info, request.task, config, judged)
    info = _build_info(request, adapter or folder, model, tokenizer, report)
    from bertstudio.core.quantize import quantize_int8, state_mb

    if request.quantize:
        control.report(f"Quantizing {request.source} to int8…", None)
        model, done = quantize_int8(model)
        info = replace(info, size_mb=done.int8_mb, quantized=done.text)
    else:
        info = replace(info, size_mb=state_mb(model))
    control.report(f"Loaded {info.architecture} from {request.source}", 1.0)
    return LoadedModel(model=model, tokenizer=tokenizer, info=info)


def _read_weights(request: LoadRequest, folder: Path, adapter: Path | None, config: Any, device: str, dtype: Any,
                  control: TaskControl) -> tuple[Any, dict[str, Any]]:
    """The task's model on its device and dtype, and transformers' loading info (an adapter merged in memory)."""
    kwargs: dict[str, Any] = {"output_loading_info": True, "trust_remote_code": False, "dtype": dtype}
    if request.attn_implementation:
        kwargs["attn_implementation"] = request.attn_implementation
    if adapter:
        kwargs["config"] = config
    model, loading_info = model_class(request.task).from_pretrained(folder, **kwargs)
    if adapter:  # merged in memory: every task runs a plain model; the saved head is not missing
        loading_info = adapter_folder.loaded_info(loading_info, adapter)
        model = adapter_folder.apply(model, adapter)
    control.check()
    model.to(device)
    return model, loading_info


def _load_failure(request: LoadRequest, device: str, judged: Judgement | None, error: Exception) -> BertStudioError:
    """What went wrong reading the weights, said as the error a person can act on."""
    if devices.is_out_of_memory(error):
        return OutOfMemory(f"{device} ran out of memory loading {request.source}.",
                           hint="Retry on the CPU, or choose float16.", details=repr(error))
    if "ignore_mismatched_sizes" in str(error):
        return MissingHeadError(f"The head in '{request.source}' does not fit {request.task} (its shape differs).",
                                hint="Choose a checkpoint trained for this task.", details=str(error))
    if judged is not None and not judged.serves(request.task) and isinstance(error, ValueError):
        return head_refused(request.source, request.task, judged, error)
    return ModelSourceError(f"Loading '{request.source}' failed: {error}", details=repr(error))


def _load_onnx(request: LoadRequest, control: TaskControl) -> LoadedModel:
    """An exported .onnx (the file, or a folder holding one) on ONNX Runtime's CPU provider, with its
    folder's tokenizer; the engine and the task readers run it as they run a PyTorch model."""
    from bertstudio.core.export.onnx_runtime import check_request, open_onnx
    from bertstudio.core.model_folder import estimate_parameters

    check_request(request.task, request.device, request.dtype, request.quantize)
    quiet_transformers()
    opened = open_onnx(request.source, request.task, control)
    config = opened.module.config
    control.report(f"Reading tokenizer of {request.source}…", None)
    tokenizer = tokenizer_for(opened.folder, opened.folder, config)
    info = _build_info(request, opened.folder, opened.module, tokenizer, HeadReport())
    architecture = (getattr(config, "architectures", None) or [info.model_type])[0]
    info = replace(info, architecture=f"{architecture} (ONNX Runtime)", size_mb=opened.size_mb,
                   parameters=estimate_parameters(config.to_dict()))
    control.report(f"Loaded {opened.module.file.name} on ONNX Runtime", 1.0)
    return LoadedModel(model=opened.module, tokenizer=tokenizer, info=info)  # type: ignore[arg-type]


class ModelCache:
    """Least-recently-used models, at most `capacity` in memory; one load per key at a time."""

    def __init__(self, capacity: int = 3) -> None:
        self.capacity = capacity
        self._models: OrderedDict[LoadRequest, LoadedModel] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[LoadRequest, threading.Lock] = {}

    def get(self, request: LoadRequest, control: TaskControl | None = None) -> LoadedModel:
        with self._lock:
            key_lock = self._key_locks.setdefault(request, threading.Lock())
        while not key_lock.acquire(timeout=0.1):  # another job loads the same model: wait, cancellably
            if control is not None:
                control.check()
        try:
            with self._lock:
                if request in self._models:
                    self._models.move_to_end(request)
                    return self._models[request]
            loaded = load_uncached(request, control)
            with self._lock:
                self._models[request] = loaded
                while len(self._models) > self.capacity:
                    self._models.popitem(last=False)
            return loaded
        finally:
            key_lock.release()

    def cached(self, request: LoadRequest) -> LoadedModel | None:
        with self._lock:
            return self._models.get(request)

    def clear(self) -> None:
        with self._lock:
            self._models.clear()


MODEL_CACHE = ModelCache()


def load_model(request: LoadRequest, control: TaskControl | None = None) -> LoadedModel:
    """The cached model for `request`, loading it if needed."""
    return MODEL_CACHE.get(request, control)
