"""An exported .onnx file as a loaded model: onnxruntime's CPU provider behind what the batch engine
and the task readers ask of a model (its config, its device, a call on tensors that gives named
outputs), so `evaluate --runtime onnx` and `classify --runtime onnx` run the file through the same
engine contract as PyTorch: tokenize once, sort by length, token budget, pad per batch, results in
input order, progress and Cancel per batch.

The source is the .onnx file itself, or a folder holding one (model.onnx, onnx/model.onnx, or its
only .onnx file). The tokenizer and config.json come from the folder the file is in when it has a
config.json, otherwise from the folder its export recorded (export/onnx.py writes it in the file's
metadata). Only the heads the exporter writes and whose readers need nothing but the outputs run
here (the specs with onnx_runtime, runtime_tasks()); anything else is refused in one line.

Nothing here imports torch at module level: the window lists exported folders before torch loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.export.ort_model import read_metadata, session_for
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import all_specs, spec_for

RUNTIMES = ("torch", "onnx")
FILE_NAMES = ("model.onnx", "onnx/model.onnx")  # ours, and optimum's layout
EXPORT_HINT = "Export it first: bertstudio export --model FOLDER --task TASK --output FOLDER/model.onnx."


def runtime_tasks() -> tuple[str, ...]:
    """The task keys an exported model runs on ONNX Runtime (their specs say so; tests run each)."""
    return tuple(key for key, spec in all_specs().items() if spec.onnx_runtime)


def find_onnx(source: str | Path) -> Path | None:
    """The .onnx file `source` names: itself, or the one a folder holds; None when there is none.
    A folder with several .onnx files and none named model.onnx is refused (which one was meant?)."""
    path = Path(source).expanduser()
    if path.suffix.lower() == ".onnx":
        return path if path.is_file() else None
    if not path.is_dir():
        return None
    for name in FILE_NAMES:
        if (path / name).is_file():
            return path / name
    found = sorted(p for p in path.glob("*.onnx") if p.is_file())
    if len(found) > 1:
        raise InputError(f"'{path}' holds {len(found)} .onnx files ({', '.join(p.name for p in found[:4])}).",
                         hint="Name the file itself, e.g. FOLDER/model.onnx.")
    return found[0] if found else None


def has_export(source: str) -> bool:
    """Whether `source` is, or holds, an exported model (the window offers ONNX Runtime then)."""
    try:
        return bool(source.strip()) and find_onnx(source) is not None
    except (InputError, OSError):
        return False


def model_folder(file: Path, metadata: dict[str, str]) -> Path:
    """Where the tokenizer and config.json are: beside the file (or above onnx/), else the export's source."""
    for folder in (file.parent, file.parent.parent if file.parent.name == "onnx" else None):
        if folder is not None and (folder / "config.json").is_file():
            return folder
    recorded = metadata.get("folder", "")
    if recorded and (Path(recorded).expanduser() / "config.json").is_file():
        return Path(recorded).expanduser()
    raise InputError(f"No config.json and tokenizer for '{file}': none beside it, and the folder it was "
                     "exported from is gone.", hint="Put the .onnx file in its model's folder (beside "
                                                    "config.json and the tokenizer files).")


class NeedsPyTorch(InputError, AttributeError):
    """A part of the model only PyTorch has (layers, embeddings, hooks, gradients): one line for the user,
    and still an AttributeError, so `hasattr`/`getattr(..., default)` probes read it as absent."""


class OnnxOutputs(dict):  # type: ignore[type-arg]
    """A forward's outputs by name, read as transformers' ModelOutput is: `out.logits` or `out["logits"]`."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class OnnxModule:
    """An onnxruntime session where the engine and the task readers expect a PreTrainedModel: `config`,
    `device` (the CPU), `eval()`, and a call on tensors that gives its outputs as CPU tensors. The
    tensors go in and come out without a copy (numpy views)."""

    training = False

    def __init__(self, session: Any, config: Any, file: Path) -> None:
        self.session = session
        self.config = config
        self.file = file
        self.input_names = tuple(item.name for item in session.get_inputs())
        self.output_names = tuple(item.name for item in session.get_outputs())

    @property
    def device(self) -> Any:
        import torch

        return torch.device("cpu")

    @property
    def dtype(self) -> Any:
        import torch

        return torch.float32

    def eval(self) -> OnnxModule:
        return self

    def parameters(self) -> list[Any]:
        return []  # the weights are inside the session; ModelInfo counts them from the config

    def modules(self) -> list[Any]:
        return []  # no torch modules: nothing to walk (core/parameters.py asks)

    def __getattr__(self, name: str) -> Any:
        """Whatever else a PreTrainedModel has (its layers, embeddings, hooks) is not in the file."""
        if name.startswith("__") or name.startswith("_"):
            raise AttributeError(name)
        raise NeedsPyTorch(f"This needs the PyTorch model ('{name}'); the exported ONNX file runs whole forwards only.",
                           hint="Load the model folder on PyTorch (device cpu) for this.")

    def __call__(self, **inputs: Any) -> OnnxOutputs:
        import numpy as np
        import torch

        unknown = [name for name in inputs if name not in self.input_names and inputs[name] is not None]
        if unknown:
            raise InputError(f"The ONNX model takes no '{unknown[0]}' input.",
                             hint="Run this with the PyTorch model (--runtime torch).")
        ids = inputs["input_ids"]
        feed = {}
        for name in self.input_names:
            value = inputs.get(name)
            if value is None and name == "token_type_ids":
                value = torch.zeros_like(ids)
            if value is None:
                raise InputError(f"The ONNX model needs '{name}', which was not given.")
            feed[name] = np.ascontiguousarray(value.numpy() if hasattr(value, "numpy") else value, dtype=np.int64)
        found = self.session.run(None, feed)
        return OnnxOutputs(zip(self.output_names, (torch.from_numpy(v) for v in found), strict=True))


@dataclass(frozen=True)
class OpenedOnnx:
    module: OnnxModule
    folder: Path  # the tokenizer's and config.json's
    size_mb: float


def check_request(task: str, device: str, dtype: str, quantize: str | None) -> None:
    """ONNX Runtime here runs float32 (or an int8-exported file) on the CPU, for runtime_tasks()."""
    if task not in runtime_tasks():
        runs = ", ".join(spec_for(key).title for key in runtime_tasks())
        raise InputError(f"{spec_for(task).title} does not run on ONNX Runtime here.",
                         hint=f"Use the PyTorch runtime; ONNX Runtime runs: {runs}.")
    if not (device or "cpu").lower().startswith("cpu") or dtype != "float32" or quantize:
        raise InputError("ONNX Runtime runs the exported file as it is, on the CPU.",
                         hint="Leave out --device, --dtype and --quantize (export an int8 file to run int8).")


def _check_head(file: Path, task: str, metadata: dict[str, str], outputs: tuple[str, ...]) -> None:
    """The file's head serves `task`: the task its export recorded, and the outputs the task reads."""
    recorded = metadata.get("task")
    if recorded and recorded != task:
        raise InputError(f"'{file.name}' holds a {spec_for(recorded).title} head, not {spec_for(task).title}.",
                         hint="Choose the task it was exported for, or export this model for the task.")
    if "logits" not in outputs:  # what every task in runtime_tasks() reads
        raise InputError(f"'{file.name}' gives {', '.join(outputs)}; {spec_for(task).title} reads logits.",
                         hint="Export the model for this task with bertstudio export.")


def open_onnx(source: str, task: str, control: TaskControl | None = None) -> OpenedOnnx:
    """The exported model `source` names, as a module the engine runs, with the folder of its
    tokenizer and config; every way this can fail says what to do."""
    control = control or TaskControl()
    file = find_onnx(source)
    if file is None:
        raise InputError(f"'{source}' is not an .onnx file or a folder holding one.", hint=EXPORT_HINT)
    control.report(f"Opening {file.name} with ONNX Runtime…", None)
    import torch  # the engine runs on torch tensors; its thread count (set once at start-up) is the app's

    session = session_for(file, torch.get_num_threads())
    metadata = read_metadata(session)
    module_outputs = tuple(item.name for item in session.get_outputs())
    _check_head(file, task, metadata, module_outputs)
    folder = model_folder(file, metadata)
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(folder, trust_remote_code=False)
    if metadata.get("id2label"):  # the labels the exported head was trained with
        import json

        config.id2label = {int(k): v for k, v in json.loads(metadata["id2label"]).items()}
        config.label2id = {v: k for k, v in config.id2label.items()}
    return OpenedOnnx(OnnxModule(session, config, file), folder, file.stat().st_size / 1e6)
