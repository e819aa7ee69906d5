"""A LoRA adapter folder as the rest of the app loads it: what it is, its head's config, its weights.

peft's own format (adapter_config.json + adapter_model.safetensors) plus, beside it, the trained
model's config (head_config.json: labels, head class) the base is rebuilt with. Loading lives here,
not in training/lora.py, so core/models.py can load an adapter without importing the training package.
"""

from __future__ import annotations

import contextlib
import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bertstudio.core.errors import ModelSourceError

ADAPTER_CONFIG = "adapter_config.json"
HEAD_CONFIG = "head_config.json"
MAX_ADAPTER_CONFIG_BYTES = 1024 * 1024


def base_name(folder: Path) -> str:
    """The base model an adapter names (base_model_name_or_path); a non-LoRA or nameless adapter is refused."""
    data = read_json(folder / ADAPTER_CONFIG, "adapter config")
    if data.get("peft_type") != "LORA":
        raise ModelSourceError(f"The adapter in '{folder}' is a {data.get('peft_type')!s:.40} adapter; "
                               "BERT Studio loads LoRA adapters.")
    base = data.get("base_model_name_or_path")
    if not isinstance(base, str) or not base.strip():
        raise ModelSourceError(f"The adapter in '{folder}' does not name its base model "
                               "(base_model_name_or_path in adapter_config.json).")
    return base


def is_adapter_folder(source: str | Path) -> bool:
    path = Path(str(source)).expanduser()
    return path.is_dir() and (path / ADAPTER_CONFIG).is_file() and not (path / "config.json").exists()



def read_json(path: Path, what: str) -> dict[str, Any]:
    from bertstudio.core.files import read_text

    try:
        data = json.loads(read_text(path, what, MAX_ADAPTER_CONFIG_BYTES))
    except (ValueError, RecursionError):
        raise ModelSourceError(f"The {what} '{path}' is not valid JSON.") from None
    if not isinstance(data, dict):
        raise ModelSourceError(f"The {what} '{path}' is not a JSON object.")
    return data



def head_config(folder: Path, base: Path) -> Any:
    """transformers' config of the trained model: head_config.json (checked like a config.json), else the base's."""
    from transformers import CONFIG_MAPPING, AutoConfig

    from bertstudio.core.model_folder import check_fields, load_pretrained

    path = folder / HEAD_CONFIG
    if not path.exists():
        return load_pretrained(AutoConfig, base, f"The configuration in '{base}' cannot be loaded.")
    data = read_json(path, "head config")
    check_fields(data, folder)
    model_type = data.get("model_type")
    if not isinstance(model_type, str) or model_type not in CONFIG_MAPPING:
        raise ModelSourceError(f"The {HEAD_CONFIG} in '{folder}' has an unknown model_type {model_type!s:.40}.")
    return CONFIG_MAPPING[model_type].from_dict(data)



@contextlib.contextmanager
def peft_quietly() -> Iterator[None]:
    """peft wrapping a transformers 5 model: peft reads `model.is_gradient_checkpointing`, which
    transformers deprecated (a FutureWarning on every LoRA command that is not ours to act on); that
    one warning is silenced, nothing else."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*is_gradient_checkpointing.* is deprecated",
                                category=FutureWarning)
        yield


def apply(model: Any, folder: Path, merge: bool = True) -> Any:
    """The adapter (and its saved head) on `model`: merged into plain weights, or the PeftModel."""
    from peft import PeftModel

    try:
        with peft_quietly():
            peft_model = PeftModel.from_pretrained(model, str(folder))
    except Exception as error:  # noqa: BLE001 - any loader failure is the adapter folder's
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise ModelSourceError(f"The adapter in '{folder}' does not fit its base model: {first[:200]}",
                               details=repr(error)) from error
    return peft_model.merge_and_unload() if merge else peft_model



def saved_heads(folder: Path) -> tuple[str, ...]:
    """The modules the adapter saves in full (the trained head): their weights are not missing."""
    names = read_json(folder / ADAPTER_CONFIG, "adapter config").get("modules_to_save") or ()
    return tuple(str(n) for n in names if isinstance(n, str))



def model_class(config: Any) -> Any:
    """The head class the adapter was trained with (head_config's architectures), a transformers class."""
    import transformers

    name = (getattr(config, "architectures", None) or [""])[0]
    cls = getattr(transformers, name, None) if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*For[A-Za-z]+", name or "") else None
    if cls is None:
        raise ModelSourceError(f"The adapter's head class '{name}' is not a transformers model class.")
    return cls



def tokenizer_folder(adapter: Path | None, base: Path) -> Path:
    """Where an adapter's tokenizer is: the adapter folder (a run saves it there), else its base."""
    from bertstudio.core.model_folder import tokenizer_files

    if adapter is not None and tokenizer_files(list(adapter.iterdir())):
        return adapter
    return base



def loaded_info(info: dict[str, Any], adapter: Path) -> dict[str, Any]:
    """transformers' loading info with the head weights the adapter brought no longer missing."""
    heads = saved_heads(adapter)

    def brought(key: object) -> bool:
        name = str(key[0] if isinstance(key, tuple) else key)
        return any(name == head or name.startswith(f"{head}.") for head in heads)

    return {**info, "missing_keys": [k for k in info.get("missing_keys", ()) if not brought(k)],
            "mismatched_keys": [k for k in info.get("mismatched_keys", ()) if not brought(k)]}



def glance_adapter(folder: Path) -> tuple[str, str]:
    """(architecture, model type) of an adapter folder from its head_config.json alone (the models list)."""
    data = read_json(folder / HEAD_CONFIG, "head config") if (folder / HEAD_CONFIG).is_file() else {}
    found = data.get("architectures")
    names: list[Any] = found if isinstance(found, list) else []
    return (", ".join(str(n) for n in names) or "?") + " (LoRA adapter)", str(data.get("model_type", "?"))
