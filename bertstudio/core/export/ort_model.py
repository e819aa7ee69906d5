"""An exported .onnx run with onnxruntime: texts in, the head's outputs (logits) out, on the CPU.

For comparing an ONNX model with its PyTorch source (core/compression) or serving it: the file
names its task, source folder and labels in its metadata (written by export/onnx.py), so the
tokenizer is found without being told. Call `load_onnx(path).logits(texts)`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError

PREFIX = "bertstudio."


@dataclass
class OrtModel:
    """An onnxruntime session and its tokenizer; `logits` gives what the PyTorch head's forward gives."""

    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # a transformers tokenizer
    metadata: dict[str, str] = field(default_factory=dict)  # task, source, folder, outputs, id2label

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.session.get_inputs())

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.session.get_outputs())

    @property
    def task(self) -> str:
        return self.metadata.get("task", "")

    @property
    def id2label(self) -> dict[int, str]:
        return {int(k): v for k, v in json.loads(self.metadata.get("id2label") or "{}").items()}

    def run(self, features: dict[str, Any]) -> dict[str, Any]:
        """The session on already tokenized numpy int64 arrays (names as the tokenizer gives them)."""
        import numpy as np

        feed = {name: np.asarray(features[name], dtype=np.int64) for name in self.input_names}
        return dict(zip(self.output_names, self.session.run(None, feed), strict=True))

    def encode(self, texts: Sequence[str], pairs: Sequence[str] | None = None,
               max_length: int | None = None) -> dict[str, Any]:
        """Texts (and second texts) padded to the longest and cut at the model's length, as numpy arrays."""
        encoded = self.tokenizer(list(texts), list(pairs) if pairs is not None else None, padding=True,
                                 truncation=True, max_length=max_length, return_tensors="np")
        return {name: encoded[name] for name in self.input_names}

    def logits(self, texts: Sequence[str], pairs: Sequence[str] | None = None,
               max_length: int | None = None) -> dict[str, Any]:
        """{output name: array}: "logits" (batch, labels) or (batch, tokens, labels); QA "start_logits"/"end_logits"."""
        if not texts:
            raise InputError("No texts to run.")
        return self.run(self.encode(texts, pairs, max_length))


def read_metadata(session: Any) -> dict[str, str]:
    """BertStudio's entries of the file's metadata, without the prefix."""
    found = session.get_modelmeta().custom_metadata_map
    return {key[len(PREFIX):]: value for key, value in found.items() if key.startswith(PREFIX)}


def session_for(file: Path, threads: int = 0) -> Any:
    """onnxruntime's CPU session on `file` (all graph optimisations), without spinning idle threads;
    `threads` for its operators (0: onnxruntime's own choice, one per physical core)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # idle threads do not spin
    try:
        return onnxruntime.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own Fail/InvalidProtobuf types
        raise InputError(f"'{file}' is not an ONNX model onnxruntime can open.", details=str(error)) from error


def load_onnx(path: str | Path, tokenizer: str | Path | Any | None = None) -> OrtModel:
    """The .onnx at `path` on onnxruntime's CPU provider, with `tokenizer` (a folder, a loaded
    tokenizer, or None: the source folder the export recorded)."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise InputError(f"'{file}' is not a file.", hint="Choose an .onnx file written by `bertstudio export`.")
    session = session_for(file)
    metadata = read_metadata(session)
    if tokenizer is None or isinstance(tokenizer, str | Path):
        folder = tokenizer if tokenizer is not None else metadata.get("folder")
        if not folder or not Path(folder).expanduser().is_dir():
            raise InputError(f"No tokenizer for '{file}': the folder it was exported from is gone.",
                             hint="Pass the model folder the tokenizer is in.")
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(Path(folder).expanduser())
    return OrtModel(session, tokenizer, metadata)
