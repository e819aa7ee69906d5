"""A model with its task head written as ONNX, validated with onnxruntime and timed on the CPU.

The exporter is torch's TorchScript-based `torch.onnx.export(..., dynamo=False)`: with torch 2.13
and transformers 5 it traces every BERT-family head we ship (bert, distilbert, roberta, albert,
electra x classification, NER, QA, masked LM, NSP, multiple choice) in seconds with named dynamic
batch and sequence axes, and needs no optimum. (The dynamo exporter also works through onnxscript
but is several times slower to export and adds nothing for these static graphs.)

The file is written beside the target as FILE.onnx.partial, opened with onnxruntime and compared
with the PyTorch model on random inputs of several batch sizes and lengths (padding included), and
only renamed to FILE.onnx when the largest absolute difference is within the tolerance: a user
never finds a half-written or wrong export under the name they chose. Cancel is honoured between
steps (torch's tracer itself cannot be interrupted; it takes seconds even for BERT-base).
"""

from __future__ import annotations

import copy
import inspect
import json
import os
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bertstudio.core import engine
from bertstudio.core.errors import BertStudioError, InputError
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import spec_for

OPSET = 17
TOLERANCE = 1e-4  # float32: onnxruntime's logits equal PyTorch's to this (largest absolute difference)
MAX_FILE_MB = 1900.0  # one .onnx file holds at most 2 GB (protobuf); larger models need external data
SHAPES = ((1, 5), (2, 17), (4, 64))  # (batch, sequence length) of the validation inputs, capped at max length
SPEED_BATCH, SPEED_LENGTH, SPEED_REPEATS = 8, 128, 5
METADATA_PREFIX = "bertstudio."
# The outputs each task's model class returns, by name, in the order onnxruntime gives them.
OUTPUTS: dict[str, tuple[str, ...]] = {
    "AutoModelForSequenceClassification": ("logits",),
    "AutoModelForTokenClassification": ("logits",),
    "AutoModelForQuestionAnswering": ("start_logits", "end_logits"),
    "AutoModelForMaskedLM": ("logits",),
    "AutoModelForNextSentencePrediction": ("logits",),
    "AutoModelForMultipleChoice": ("logits",),
}  # not "AutoModel" (similarity, attention): BertModel's and RobertaModel's forward do not trace (`use_cache`
# given twice by the tracer, transformers 5.24); not pre-training: its two heads differ per architecture
CHOICES_CLASS = "AutoModelForMultipleChoice"  # inputs are (batch, choices, sequence)


@dataclass(frozen=True)
class Speed:
    """Milliseconds per batch of one runtime (median of SPEED_REPEATS, in turns with the others, after a warm-up)."""

    runtime: str  # "onnxruntime", "pytorch", "pytorch int8"
    ms_per_batch: float
    batch: int
    length: int


@dataclass(frozen=True)
class ExportResult:
    """What was written and how well it matches: the largest difference over every compared shape."""

    path: str
    source: str
    task: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    opset: int
    max_difference: float
    shapes: tuple[tuple[int, int], ...]  # (batch, length) pairs compared
    size_mb: float
    speeds: tuple[Speed, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def speedup(self, runtime: str) -> float | None:
        """PyTorch's time over `runtime`'s (2.0: twice as fast as PyTorch float32)."""
        times = {s.runtime: s.ms_per_batch for s in self.speeds}
        if runtime not in times or "pytorch" not in times or times[runtime] <= 0:
            return None
        return times["pytorch"] / times[runtime]

    @property
    def text(self) -> str:
        lines = [f"Wrote {self.path} ({self.size_mb:.1f} MB, opset {self.opset}).",
                 f"Largest difference onnxruntime vs PyTorch: {self.max_difference:.2e} over "
                 f"{len(self.shapes)} input shapes (batch x length: "
                 f"{', '.join(f'{b}x{n}' for b, n in self.shapes)})."]
        for s in self.speeds:
            ratio = self.speedup(s.runtime)
            lines.append(f"  {s.runtime:<13} {s.ms_per_batch:8.1f} ms per batch of {s.batch}x{s.length}"
                         + (f"  ({ratio:.2f}x PyTorch)" if ratio is not None and s.runtime != "pytorch" else ""))
        return "\n".join(lines + list(self.notes))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["shapes"] = [list(shape) for shape in self.shapes]
        data["speedup_vs_pytorch"] = {s.runtime: self.speedup(s.runtime) for s in self.speeds
                                      if s.runtime != "pytorch"}
        return data


def outputs_for(task: str) -> tuple[str, ...]:
    """The output names of `task`'s head; a task whose head the exporter does not handle is refused."""
    spec = spec_for(task)
    if spec.model_class not in OUTPUTS:
        raise InputError(f"{spec.title} models cannot be exported to ONNX here.",
                         hint="Export the model for one of: " + ", ".join(exportable_titles()) + ".")
    return OUTPUTS[spec.model_class]


def exportable_tasks() -> tuple[str, ...]:
    """Task keys whose head the exporter handles (see OUTPUTS for what it does not)."""
    from bertstudio.core.tasks.spec import all_specs

    return tuple(key for key, spec in all_specs().items() if spec.model_class in OUTPUTS)


def exportable_titles() -> tuple[str, ...]:
    return tuple(spec_for(key).title for key in exportable_tasks())


def check_output(output: str | Path, overwrite: bool = False) -> Path:
    """The target file: must end in .onnx and sit in an existing folder; not a folder itself; new, or
    replaced only when asked (`overwrite`: --overwrite, or the window's own "Replace?"); see core/outputs.py."""
    from bertstudio.core.outputs import output_file

    path = Path(output).expanduser()
    if path.suffix.lower() != ".onnx":
        raise InputError(f"'{path}' does not end in .onnx.", hint="Name the output FILE.onnx.")
    if path.is_dir():
        raise InputError(f"'{path}' is a folder.", hint="Name a file, e.g. model.onnx.")
    if not path.parent.is_dir():
        raise InputError(f"The folder '{path.parent}' does not exist.", hint="Create it first, or choose another.")
    return output_file(path, "ONNX file", overwrite)


def input_names(model: Any, tokenizer: Any) -> tuple[str, ...]:
    """The tokenizer's inputs that the model takes, in forward()'s order (the tracer passes them by position)."""
    parameters = list(inspect.signature(model.forward).parameters)
    names = [name for name in tokenizer.model_input_names if name in parameters]
    if "input_ids" not in names or "attention_mask" not in names:
        raise InputError("This model's tokenizer does not give input_ids and attention_mask.",
                         hint="Only BERT-family text models are exported.")
    return tuple(sorted(names, key=parameters.index))


def sample_inputs(config: Any, names: tuple[str, ...], batch: int, length: int, choices: bool,
                  seed: int = 0) -> dict[str, Any]:
    """Random token ids of shape (batch, length) (or (batch, 2, length) for multiple choice); each
    row after the first is padded a little more, so the attention mask's zeros are exercised."""
    import numpy as np

    rng = np.random.default_rng(seed + batch * 1000 + length)
    shape = (batch, 2, length) if choices else (batch, length)
    ids = rng.integers(5, int(config.vocab_size), size=shape, dtype=np.int64)
    mask = np.ones(shape, dtype=np.int64)
    for row in range(1, batch):
        real = max(1, length - row * max(1, length // (batch + 1)))
        mask[row, ..., real:] = 0
    pad = getattr(config, "pad_token_id", None)
    if pad is not None:
        ids[mask == 0] = pad
    values = {"input_ids": ids, "attention_mask": mask}
    if "token_type_ids" in names:
        types = np.zeros(shape, dtype=np.int64)
        if int(getattr(config, "type_vocab_size", 1) or 1) > 1:
            types[..., length // 2:] = 1
        values["token_type_ids"] = types
    return {name: values[name] for name in names}


def _session(path: Path) -> Any:
    import onnxruntime
    import torch

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4  # its warnings and errors are not the user's business: ours name what failed
    # torch's thread count, and no spin-waiting after a run: spinning workers starve the PyTorch run
    # timed next to it (a tiny model measured 700 ms instead of 1 ms) and the rest of the app
    options.intra_op_num_threads = torch.get_num_threads()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def max_difference(model: Any, session: Any, names: tuple[str, ...], outputs: tuple[str, ...],
                   shapes: tuple[tuple[int, int], ...], choices: bool, control: TaskControl) -> float:
    """The largest |onnxruntime - PyTorch| over every output of every sample shape; a file onnxruntime
    cannot run at one of them is refused in one line (Longformer's banded attention pads by the traced
    length: its file fails at run time on every other length)."""
    import numpy as np

    largest = 0.0
    for batch, length in shapes:
        control.check()
        feed = sample_inputs(model.config, names, batch, length, choices)
        try:
            got = session.run(list(outputs), feed)
        except Exception as error:
            if not type(error).__module__.startswith("onnxruntime"):
                raise
            raise InputError(f"The exported {type(model).__name__} fails in onnxruntime on inputs of other "
                             f"lengths ({_first_line(error)}); it was not kept.",
                             hint="Keep the PyTorch model for this architecture.", details=repr(error)) from error
        result = engine.forward(model, feed)
        want = [result[name].float().numpy() for name in outputs]
        mask = feed["attention_mask"].astype(bool)
        for ort_value, torch_value in zip(got, want, strict=True):
            difference = np.abs(ort_value - torch_value)
            if difference.shape[: mask.ndim] == mask.shape:  # per-token outputs: padding positions are not read
                difference = difference[mask]
            largest = max(largest, float(difference.max()))
    return largest


def _interleaved_ms(runs: dict[str, Callable[[], object]], control: TaskControl) -> dict[str, float]:
    """Median milliseconds of each run, measured in turns (the order rotating) after one warm-up
    each, so a busy moment of the machine hits every runtime alike."""
    for run in runs.values():
        run()  # first-call allocation and kernel selection
    times: dict[str, list[float]] = {name: [] for name in runs}
    order = list(runs)
    for repeat in range(SPEED_REPEATS):
        for name in order[repeat % len(order):] + order[: repeat % len(order)]:
            control.check()
            start = time.perf_counter()
            runs[name]()
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def measure_speeds(model: Any, session: Any, names: tuple[str, ...], length: int, choices: bool,
                   control: TaskControl) -> tuple[tuple[Speed, ...], tuple[str, ...]]:
    """onnxruntime, PyTorch float32 and PyTorch dynamic int8 on the same batch, on the CPU."""
    import torch

    feed = sample_inputs(model.config, names, SPEED_BATCH, length, choices, seed=1)
    feed["attention_mask"][:] = 1
    tensors = {name: torch.from_numpy(value) for name, value in feed.items()}

    def torch_run(m: Any) -> Callable[[], object]:
        return lambda: engine.forward(m, tensors)

    control.report("Preparing the PyTorch and int8 models for timing…", 0.8)
    fast = copy.deepcopy(model)  # timed as the app runs it (sdpa attention), not as traced (eager)
    try:
        fast.set_attn_implementation("sdpa")
    except (AttributeError, ValueError):  # an architecture without sdpa keeps eager
        pass
    runs = {"onnxruntime": lambda: session.run(None, feed), "pytorch": torch_run(fast)}
    notes: list[str] = []
    try:
        from bertstudio.core.quantize import quantize_int8

        runs["pytorch int8"] = torch_run(quantize_int8(copy.deepcopy(fast))[0])
    except BertStudioError as error:  # no quantized engine in this torch build
        notes.append(f"int8 not timed: {error}")
    control.report("Timing onnxruntime, PyTorch and int8…", 0.85)
    medians = _interleaved_ms(runs, control)
    return tuple(Speed(name, ms, SPEED_BATCH, length) for name, ms in medians.items()), tuple(notes)


def _add_metadata(path: Path, values: dict[str, str]) -> None:
    """Task, source and labels inside the file (ort_model reads them back: the tokenizer's source, the labels)."""
    import onnx

    proto = onnx.load(str(path))
    for key, value in values.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = METADATA_PREFIX + key, value
    onnx.save(proto, str(path))


def _trace(model: Any, feed: dict[str, Any], names: tuple[str, ...], outputs: tuple[str, ...],
           choices: bool, path: Path) -> None:
    import torch

    axes = {0: "batch", 1: "choices", 2: "sequence"} if choices else {0: "batch", 1: "sequence"}
    dynamic = {name: axes for name in names}
    for name in outputs:  # the other output axes (sequence, labels) follow from the inputs' by shape inference
        dynamic[name] = {0: "batch", 1: "choices"} if choices else {0: "batch"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about Python control flow on shapes
        try:
            _export(torch, model, feed, names, outputs, dynamic, path)
        except TypeError as error:  # RobertaModel: the tracer fills forward()'s `cache`/`use_cache` twice
            raise InputError(f"torch's ONNX exporter cannot trace this {type(model).__name__}.",
                             hint="Export a task head of this model instead.", details=str(error)) from error
        except (AssertionError, RuntimeError) as error:  # Longformer's QA/choice heads assert on traced shapes
            raise InputError(f"torch's ONNX exporter cannot trace this {type(model).__name__}: "
                             f"{_first_line(error)}", hint="Keep the PyTorch model for this architecture and head.",
                             details=repr(error)) from error


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:200]


def _export(torch: Any, model: Any, feed: dict[str, Any], names: tuple[str, ...], outputs: tuple[str, ...],
            dynamic: dict[str, Any], path: Path) -> None:
    """Positional inputs in forward()'s order (keyword calls through a wrapper traced RoBERTa's QA head wrongly)."""
    torch.onnx.export(model, tuple(torch.from_numpy(feed[name]) for name in names), str(path),
                      input_names=list(names), output_names=list(outputs), dynamic_axes=dynamic,
                      opset_version=OPSET, do_constant_folding=True, dynamo=False)


def export_loaded(loaded: Any, output: str | Path, control: TaskControl | None = None, *,
                  tolerance: float = TOLERANCE, speed: bool = True, overwrite: bool = False) -> ExportResult:
    """Write `loaded` (a core.models.LoadedModel on the CPU in float32) as ONNX at `output`, validated;
    `<output>.lock` is held meanwhile, so a second export to the same file is refused."""
    from bertstudio.core.outputs import folder_lock

    control = control or TaskControl()
    path = check_output(output, overwrite)
    with folder_lock(path, "export"):
        return _export_locked(loaded, path, control, tolerance, speed)


def _export_locked(loaded: Any, path: Path, control: TaskControl, tolerance: float, speed: bool) -> ExportResult:
    task = loaded.info.request.task
    outputs = outputs_for(task)
    request = loaded.info.request
    if request.quantize or request.dtype != "float32" or not request.device.startswith("cpu"):
        raise InputError("Only a float32 model on the CPU is exported (int8, half precision and GPU models are not).",
                         hint="Load the model in float32 on the CPU.")
    if loaded.info.size_mb > MAX_FILE_MB:
        raise InputError(f"The model is {loaded.info.size_mb:.0f} MB; one ONNX file holds at most 2 GB.")
    model, tokenizer = loaded.model.eval(), loaded.tokenizer
    choices = spec_for(task).model_class == CHOICES_CLASS
    names = input_names(model, tokenizer)
    limit = max(2, int(loaded.info.max_length))
    shapes = tuple((batch, min(length, limit)) for batch, length in SHAPES)
    partial = path.with_name(path.name + ".partial")
    try:
        with engine.holding(loaded):  # tracing, validating and timing the shared model: no other job meanwhile
            control.check()
            control.report(f"Exporting {loaded.info.architecture} to ONNX…", 0.1)
            _trace(model, sample_inputs(model.config, names, 2, min(8, limit), choices), names, outputs,
                   choices, partial)
            _add_metadata(partial, {"task": task, "source": loaded.info.request.source, "folder": loaded.info.folder,
                                    "outputs": ",".join(outputs),
                                    "id2label": json.dumps({str(k): v for k, v in loaded.info.id2label.items()})})
            control.check()
            control.report("Validating with onnxruntime…", 0.5)
            session = _session(partial)
            difference = max_difference(model, session, names, outputs, shapes, choices, control)
            if not difference <= tolerance:
                raise InputError(
                    f"The exported model differs from PyTorch by {difference:.2e} (more than {tolerance:g}); "
                    "it was not kept.",
                    hint="This architecture and head do not trace faithfully; keep the PyTorch model.")
            speeds: tuple[Speed, ...] = ()
            notes: tuple[str, ...] = ()
            if speed:
                speeds, notes = measure_speeds(model, session, names, min(SPEED_LENGTH, limit), choices, control)
            control.check()
            os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    if loaded.info.head_warning:
        notes += (loaded.info.head_warning,)
    control.report(f"Exported to {path}", 1.0)
    return ExportResult(str(path), loaded.info.request.source, task, names, outputs, OPSET, difference, shapes,
                        path.stat().st_size / 1e6, speeds, notes)


def export_onnx(source: str, task: str, output: str | Path, control: TaskControl | None = None, *,
                tolerance: float = TOLERANCE, speed: bool = True, overwrite: bool = False) -> ExportResult:
    """Load `source` for `task` (eager attention, float32, CPU: what traces exactly) and export it."""
    from bertstudio.core.models import LoadRequest, load_model

    outputs_for(task)  # an unsupported head is refused before any weights are read
    check_output(output, overwrite)
    loaded = load_model(LoadRequest(source, task, attn_implementation="eager"), control)
    return export_loaded(loaded, output, control, tolerance=tolerance, speed=speed, overwrite=overwrite)
