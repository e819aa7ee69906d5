"""The folders this package writes (an SAE, a tuned lens) and the one way they are read back.

Writing follows the output policy every trainer shares (core/training/saving.py): the folder is
checked first (never a folder BERT Studio did not make, an earlier one only when asked), locked
for the run, built in `<output>.partial` with the run marker and put in place by renames, so it
is never half-written; a failed write removes the partial folder. Safetensors only.

Reading validates before it allocates: the safetensors header is bounded by the file's size and
checked for exactly the tensors expected, with their shapes; JSON files are small, UTF-8 and
shallow, and every field read is checked for its type.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bertstudio.core import outputs
from bertstudio.core.errors import InputError
from bertstudio.core.json_values import dumps

MAX_JSON_BYTES = 64 * 1024 * 1024
TASK = "features"  # the run marker's task for every folder written here


def prepare(output: str | Path, overwrite: bool) -> Path:
    """The output folder, refused where writing would lose files (saving.check_output's policy)."""
    from bertstudio.core.training.saving import check_output

    if not str(output).strip():
        raise InputError("Choose an output folder.")
    return check_output(str(output), overwrite)


def write_folder(output: Path, kind: str, tensors: Mapping[str, Mapping[str, np.ndarray]],
                 documents: Mapping[str, Any]) -> Path:
    """`tensors` (file name -> named arrays, safetensors) and `documents` (file name -> JSON value)
    into `output`, atomically, marked as a BERT Studio `kind` folder."""
    import shutil

    from safetensors.numpy import save_file

    from bertstudio.core.training import saving

    partial = saving.partial_dir(output)
    with outputs.folder_lock(output, TASK), saving.saving_to(partial, f"the {kind}", output.parent):
        if partial.exists():
            shutil.rmtree(partial)  # ours or empty: check_output refused anything else
        partial.mkdir(parents=True)
        for name, arrays in tensors.items():
            save_file({key: np.ascontiguousarray(value) for key, value in arrays.items()}, str(partial / name))
        for name, value in documents.items():
            (partial / name).write_text(dumps(value, indent=1), encoding="utf-8")
        saving.write_marker(partial, kind, TASK)
        saving.replace_folder(partial, output)
    return output


def folder(path: str | Path, what: str, needed: tuple[str, ...]) -> Path:
    """`path` as a folder holding every file in `needed`; one line naming what is missing otherwise."""
    place = Path(path).expanduser()
    if not place.is_dir():
        raise InputError(f"The {what} folder '{place}' does not exist or is not a folder.",
                         hint=f"Choose a folder written by BERT Studio (it holds {', '.join(needed)}).")
    missing = [name for name in needed if not (place / name).is_file()]
    if missing:
        raise InputError(f"'{place}' is not a {what} folder: it has no {', '.join(missing)}.",
                         hint=f"Choose a folder written by BERT Studio (it holds {', '.join(needed)}).")
    return place


def read_json(path: Path, what: str) -> dict[str, Any]:
    from bertstudio.core.datafiles import parse_json
    from bertstudio.core.files import read_text

    value = parse_json(read_text(path, what, MAX_JSON_BYTES), f"The {what} '{path}'")
    if not isinstance(value, dict):
        raise InputError(f"The {what} '{path}' is not a JSON object.")
    return value


def field(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], path: Path,
          check: Callable[[Any], bool] = lambda _v: True) -> Any:
    """`data[name]` if it is of `kind` (a bool is no int) and passes `check`; one line naming it otherwise."""
    value = data.get(name)
    wrong_bool = isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,))
    if not isinstance(value, kind) or wrong_bool or (isinstance(value, float) and not math.isfinite(value)) \
            or not check(value):
        raise InputError(f"'{path}' has no valid \"{name}\" (found {str(value)[:60]!r}).",
                         hint="The folder was damaged or edited; write it again.")
    return value


def read_tensors(path: Path, expected: Mapping[str, tuple[int, ...]], what: str) -> dict[str, np.ndarray]:
    """Exactly the tensors `expected` names, with those shapes, as float or int numpy arrays; the header
    is read and checked against the file's size before any tensor is (anatomy.checkpoint.read_header)."""
    from safetensors import safe_open

    from bertstudio.core.anatomy.checkpoint import read_header
    from bertstudio.core.errors import ModelSourceError
    from bertstudio.core.files import regular_file

    regular_file(path, what)
    try:
        shapes = read_header(path)
    except ModelSourceError as error:
        raise InputError(f"The {what} '{path}' is damaged: {error.message}") from None
    if sorted(shapes) != sorted(expected):
        raise InputError(f"The {what} '{path}' holds {', '.join(sorted(shapes)) or 'no tensors'}, not "
                         f"{', '.join(sorted(expected))}.", hint="Write it again with BERT Studio.")
    for name, shape in expected.items():
        if shapes[name] != tuple(shape):
            raise InputError(f"The {what} '{path}' has {name} of shape {shapes[name]}, not {tuple(shape)}.",
                             hint="The folder was damaged or edited; write it again.")
    try:
        with safe_open(str(path), framework="numpy") as handle:
            arrays = {name: handle.get_tensor(name) for name in expected}
    except Exception as error:  # noqa: BLE001 - safetensors raises its own error types
        raise InputError(f"The {what} '{path}' cannot be read: {error}.") from None
    for name, array in arrays.items():
        if array.dtype.kind == "f" and not bool(np.isfinite(array).all()):
            raise InputError(f"The {what} '{path}' holds non-finite numbers in {name}.")
    return arrays


def model_identity(loaded: Any) -> dict[str, Any]:
    """What a folder records of the model it was made from, to refuse it on another model."""
    config = loaded.model.config
    return {"model": loaded.info.request.source, "model_folder": str(Path(loaded.info.folder).resolve()),
            "model_type": str(getattr(config, "model_type", "")),
            "hidden_size": int(getattr(config, "hidden_size", 0) or getattr(config, "dim", 0) or 0)}


def same_model(recorded: Mapping[str, Any], loaded: Any) -> bool:
    """Whether `loaded` is the model a folder was made from (its resolved folder, else its source)."""
    now = model_identity(loaded)
    if recorded.get("model_folder") and recorded.get("model_folder") == now["model_folder"]:
        return True
    return recorded.get("model") == now["model"] and recorded.get("model_type") == now["model_type"]
