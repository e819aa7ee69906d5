"""Model sources, loading, the head report and a bounded cache.

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
from bertstudio.core.anatomy import checkpoint
from bertstudio.core.anatomy.checkpoint import Judgement, custom_code_reason
from bertstudio.core.anatomy.families import family_of, max_positions, reads_segments, segments_refusal
from bertstudio.core.errors import BertStudioError, MissingHeadError, ModelSourceError, OutOfMemory
from bertstudio.core.hub import hub_folder, is_hub_id
from bertstudio.core.model_folder import TOKENIZER_HINT, check_fields, check_folder, load_pretrained, read_config
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


def resolve_source(source: str, control: TaskControl | None = None) -> Path:
    """A local model folder for `source`; Hub ids are fetched (or found in the cache offline)."""
    text = (source or "").strip()
    if not text:
        raise ModelSourceError(
            "No model chosen.", hint="Type a Hugging Face Hub id or choose a local model folder."
        )
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelSourceError(f"'{text}' is a file, not a model folder.", hint="Choose its folder instead.")
        if not (path / "config.json").exists():  # a FIFO or a huge one is refused by check_folder
            raise ModelSourceError(
                f"'{text}' is not a model folder: it has no config.json.",
                hint="Choose the folder that holds config.json, the weights (model.safetensors) and the tokenizer.",
            )
        return _checked(path.resolve())
    if text.startswith(("/", "./", "../", "~")) or not is_hub_id(text):
        raise ModelSourceError(
            f"'{text}' is neither a folder on this machine nor a Hugging Face Hub id.",
            hint="Check the path, or use an id such as google-bert/bert-base-uncased.",
        )
    return _checked(hub_folder(text, control or TaskControl()))


def _checked(folder: Path) -> Path:
    """Every caller (loading, training) gets a folder our reader passed: config types and bounds,
    no custom code, no FIFOs, weights and tokenizer present; before transformers allocates."""
    _checked_config(folder)
    check_folder(folder)
    return folder


def adapter_base(folder: Path, control: TaskControl | None = None) -> Path:
    """The base model folder a LoRA adapter names (resolved offline like any source); a missing one is named."""
    base = adapter_folder.base_name(folder)
    try:
        return resolve_source(base, control)
    except ModelSourceError as error:
        raise ModelSourceError(f"The adapter in '{folder}' was trained on the base model '{base}', which cannot "
                               f"be loaded: {error.message}",
                               hint="Put that base model where the adapter says (or download it once), or edit "
                                    "base_model_name_or_path in adapter_config.json.") from None


def adapter_tasks(folder: Path) -> tuple[str, ...]:
    """The task specs whose model class is the adapter's head class (the base must be on this machine),
    from head_config.json, else the base's config.json: no transformers imported (the models list)."""
    base = adapter_base(folder)
    path = folder / adapter_folder.HEAD_CONFIG
    if not path.exists():
        return checkpoint.saved_class_tasks(read_config(base))
    config = adapter_folder.read_json(path, "head config")
    check_fields(config, folder)
    reason = custom_code_reason(config)
    if reason:
        raise ModelSourceError(f"The {adapter_folder.HEAD_CONFIG} in '{folder}' {reason}.")
    return checkpoint.saved_class_tasks(config)


def quiet_transformers() -> None:
    """Our head report replaces transformers' LOAD REPORT table and progress bars."""
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def _model_class(task: str) -> Any:
    import transformers

    return getattr(transformers, spec_for(task).model_class)


def head_class(task: str, config: Any) -> Any:
    """transformers' class for `task` on this config's architecture, or None where it has none."""
    return _model_class(task)._model_mapping.get(type(config), None)


def _check_task_supported(task: str, config: Any) -> None:
    if head_class(task, config) is None:
        family = family_of(config)
        name = family.name if family else config.model_type
        wanted = type(config).__name__.removesuffix("Config") + spec_for(task).model_class.removeprefix("AutoModel")
        raise MissingHeadError(
            f"A {name} model cannot do {task}: transformers has no {task} head for {name} (no {wanted} class).",
            hint="Choose a model of another architecture for this task (for example BERT).",
        )


def _checked_config(folder: Path) -> dict[str, Any]:
    """config.json through our reader (types, bounds), refused if it needs custom code."""
    config = read_config(folder)
    reason = custom_code_reason(config)
    if reason:
        raise ModelSourceError(
            f"The model in '{folder}' {reason}.",
            hint="Choose a model of a standard architecture (BERT, DistilBERT, RoBERTa, ALBERT, ELECTRA).",
        )
    return config


def _checkpoint_config(folder: Path) -> Any:
    """transformers' config, after our reader checked types, sizes and custom code (never run)."""
    from transformers import AutoConfig

    _checked_config(folder)
    return load_pretrained(AutoConfig, folder, f"The config.json in '{folder}' cannot be read as a transformers model.",
                           hint="Check that the folder holds a BERT-family model saved with save_pretrained.")


def _check_tokenizer(tokenizer: Any, folder: Path) -> None:
    """An empty vocabulary (only special tokens) makes every word [UNK]: refuse it, never compute on it."""
    if len(tokenizer) <= len(set(tokenizer.all_special_tokens)) + 1:
        raise ModelSourceError(
            f"The tokenizer in '{folder}' has no vocabulary ({len(tokenizer)} tokens, all special): every "
            "word would become [UNK] and the results would be meaningless.", hint=TOKENIZER_HINT)


def _check_vocabulary(tokenizer: Any, config: Any, folder: Path) -> None:
    """Every id the tokenizer gives must have a row in the model's embeddings, or the forward pass fails
    with an IndexError: token ids (config vocab_size) and segment ids (type_vocab_size: a model with
    one segment row gets no segment ids, so a sentence pair reads as one segment). Before the weights."""
    rows = getattr(config, "vocab_size", None)
    ids = len(tokenizer)  # the vocabulary and the added tokens: ids 0 .. len - 1
    if isinstance(rows, int) and ids > rows:
        raise ModelSourceError(
            f"The tokenizer in '{folder}' has {ids:,} tokens but the model's embedding has only {rows:,} rows "
            f"(config.json vocab_size = {rows:,}): token ids {rows:,} and above have no embedding.",
            hint="The tokenizer files belong to another model: copy those of the model the checkpoint was "
                 "trained from, or fix vocab_size.")
    refusal = segments_refusal(config)
    if refusal:
        raise ModelSourceError(f"The model in '{folder}' {refusal}.",
                               hint="Fix type_vocab_size or choose another model folder.")
    if not reads_segments(config):  # one row or none (DeBERTa-v3): read a pair as one segment, as RoBERTa does
        tokenizer.model_input_names = [name for name in tokenizer.model_input_names if name != "token_type_ids"]


def judge_heads(folder: Path) -> Judgement:
    """Which tasks the folder's weights were trained for: the models list's judgement (config.json and the
    safetensors header; a broken header is a ModelSourceError naming the file, before transformers reads it)."""
    return checkpoint.judge_folder(folder, read_config(folder))


def _head_report(info: dict[str, Any], task: str, config: Any, judged: Judgement | None = None) -> HeadReport:
    """The weights the task's class lacked (transformers' loading info); then, all there, whether the head
    was trained for `task`: the folder's judgement (`judged`), else (a LoRA adapter) the saved class's name."""
    spec = spec_for(task)
    mismatched = tuple(sorted(str(k[0] if isinstance(k, tuple) else k) for k in info.get("mismatched_keys", ())))
    missing = tuple(sorted(str(k) for k in info.get("missing_keys", ())))
    unused = tuple(k for k in missing if spec.ignore_missing and k.startswith(spec.ignore_missing))
    report = HeadReport(
        missing=tuple(k for k in missing if k not in unused),
        unexpected=tuple(sorted(info.get("unexpected_keys", ()))),
        mismatched=mismatched,
        unused=unused,
    )
    if not report.complete:
        return report
    if judged is not None:
        return report if judged.serves(task) else replace(report, trained_as=judged.trained_as())
    suffix = spec.trained_as
    trained_as = getattr(config, "architectures", None) or []
    if suffix and trained_as and not any(a.endswith(suffix) for a in trained_as):
        # BERT's sequence, token and choice heads are all called `classifier`: trust the saved class.
        return replace(report, trained_as=", ".join(trained_as))
    return report


def probe_heads(folder: Path, task: str) -> HeadReport:
    """The head report for `task` without reading tensor data (weights placed on the meta device)."""
    quiet_transformers()
    config = _checkpoint_config(folder)  # checked and bounded first: the meta model stays small to build
    _check_task_supported(task, config)
    judged = judge_heads(folder)
    try:
        _, info = _model_class(task).from_pretrained(
            folder, output_loading_info=True, device_map="meta", trust_remote_code=False
        )
    except (RuntimeError, ValueError) as error:  # a head of the wrong shape (27 labels where 1 is wanted)
        raise _head_refused(str(folder), task, judged, error) from error
    return _head_report(info, task, config, judged)


def _head_refused(source: str, task: str, judged: Judgement | None, error: BaseException) -> MissingHeadError:
    """transformers would not build `task`'s class on this checkpoint (DistilBERT's QA head wants 2 labels,
    a 5-label NER checkpoint has 5): said with what the head was trained as, the one reason of the many."""
    saved = f" It was saved as {judged.trained_as()}." if judged is not None and not judged.serves(task) else ""
    first = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
    return MissingHeadError(f"The head in '{source}' does not fit {task} ({first}).{saved}",
                            hint="Choose a checkpoint trained for this task.", details=str(error))


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
    config = _checkpoint_config(folder)  # resolve_source checked the folder: nothing allocated before
    if adapter:  # a LoRA adapter: the base rebuilt with the trained model's labels and head
        config = adapter_folder.head_config(adapter, folder)
    _check_task_supported(request.task, config)
    judged = None if adapter else judge_heads(folder)  # the models list's judgement, before any weight is read
    device = devices.normalise_device(request.device)
    dtype = devices.torch_dtype(device, request.dtype)
    from bertstudio.core.quantize import check_quantize

    check_quantize(request.quantize, device)  # int8 on a GPU is refused before the weights are read
    control.report(f"Reading tokenizer of {request.source}…", None)
    tokenizer = _tokenizer(adapter_folder.tokenizer_folder(adapter, folder), folder, config)
    control.check()
    control.report(f"Loading weights of {request.source}…", None)
    kwargs: dict[str, Any] = {"output_loading_info": True, "trust_remote_code": False, "dtype": dtype}
    if request.attn_implementation:
        kwargs["attn_implementation"] = request.attn_implementation
    try:
        if adapter:
            kwargs["config"] = config
        model, loading_info = _model_class(request.task).from_pretrained(folder, **kwargs)
        if adapter:  # merged in memory: every task runs a plain model; the saved head is not missing
            loading_info = adapter_folder.loaded_info(loading_info, adapter)
            model = adapter_folder.apply(model, adapter)
        control.check()
        model.to(device)
    except BertStudioError:
        raise
    except Exception as error:
        if devices.is_out_of_memory(error):
            raise OutOfMemory(
                f"{device} ran out of memory loading {request.source}.",
                hint="Retry on the CPU, or choose float16.",
                details=repr(error),
            ) from error
        if "ignore_mismatched_sizes" in str(error):
            raise MissingHeadError(
                f"The head in '{request.source}' does not fit {request.task} (its shape differs).",
                hint="Choose a checkpoint trained for this task.",
                details=str(error),
            ) from error
        if judged is not None and not judged.serves(request.task) and isinstance(error, ValueError):
            raise _head_refused(request.source, request.task, judged, error) from error
        raise ModelSourceError(f"Loading '{request.source}' failed: {error}", details=repr(error)) from error
    model.eval()
    check_config = spec_for(request.task).check_config
    if check_config is not None:  # a head the task cannot read (BERT's QA class takes 5 labels; DistilBERT's refuses)
        check_config(model.config, request.source)
    report = _head_report(loading_info, request.task, config, judged)
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


def _tokenizer(where: Path, folder: Path, config: Any) -> Any:
    """The tokenizer in `where`, checked against the model in `folder` (its vocabulary fits the embeddings)."""
    from transformers import AutoTokenizer

    tokenizer = load_pretrained(AutoTokenizer, where, f"The tokenizer in '{folder}' cannot be loaded.",
                                hint="The folder needs tokenizer files (tokenizer.json, or vocab.txt / vocab.json "
                                     "+ merges.txt).")
    _check_tokenizer(tokenizer, folder)
    _check_vocabulary(tokenizer, config, folder)
    return tokenizer


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
    tokenizer = _tokenizer(opened.folder, opened.folder, config)
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
