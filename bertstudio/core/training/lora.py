"""LoRA adapters with peft: wrap a model for training, count what trains, load and merge adapter folders.

The adapter folder is peft's own format (adapter_config.json + adapter_model.safetensors), so
`PeftModel.from_pretrained(base, folder)` loads it in plain transformers code. Beside it: the
tokenizer, our run marker (the task) and `head_config.json`, the trained model's config (labels,
head class) that the base model is rebuilt with. The task head trains in full (`modules_to_save`):
the model's own non-encoder modules, found generically (a module tied to the embeddings, as a
masked-LM decoder is, is split into its untied parts). LoRA targets only the encoder (a regex over
module names under the base model's prefix), so a head's `dense` is never both a target and saved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.adapter_folder import (
    HEAD_CONFIG,
    apply,
    head_config,
    is_adapter_folder,
    model_class,
    tokenizer_folder,
)
from bertstudio.core.anatomy.modules import family_for
from bertstudio.core.errors import InputError
from bertstudio.core.models import adapter_base

QUERY_VALUE = "query,value"
ALL_LINEAR = "all-linear"


@dataclass(frozen=True)
class LoraSettings:
    """The adapter a run trains: rank 0 means a full fine-tune."""

    rank: int
    alpha: int = 16
    dropout: float = 0.1
    targets: str = QUERY_VALUE


@dataclass(frozen=True)
class LoraCount:
    """What trains: the adapter's parameters, the head's, all of the model's, and the adapter file's size."""

    trainable: int
    total: int

    @property
    def adapter_bytes(self) -> int:
        return self.trainable * 4  # float32 safetensors: LoRA matrices and the saved head

    @property
    def share(self) -> float:
        return self.trainable / self.total if self.total else 0.0

    def describe(self) -> str:
        return (f"{self.trainable:,} of {self.total:,} parameters train ({100 * self.share:.2f}%); "
                f"adapter about {self.adapter_bytes / 2**20:,.1f} MiB")


def settings_of(config: Any) -> LoraSettings | None:
    """The LoRA settings of a TrainConfig, or None for a full fine-tune."""
    rank = int(getattr(config, "lora_rank", 0) or 0)
    if rank <= 0:
        return None
    return LoraSettings(rank, int(config.lora_alpha), float(config.lora_dropout),
                        (config.lora_targets or QUERY_VALUE).strip())


def check_run(config: Any, distils: bool) -> None:
    """What LoRA cannot go with, refused before anything loads (no silent full fine-tune)."""
    if settings_of(config) is None:
        return
    if distils:
        raise InputError("Distillation cannot train a LoRA adapter: the student is trained in full.",
                         hint="Set the LoRA rank to 0 (leave out --lora) or choose another task.")
    if getattr(config, "scratch", None) is not None:
        raise InputError("A model pre-trained from scratch cannot train a LoRA adapter (there is no base model).",
                         hint="Set the LoRA rank to 0 or choose a base model.")
    names = [name.strip() for name in config.lora_targets.split(",")]
    if not config.lora_targets.strip() or any(not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*|all-linear", n) for n in names):
        raise InputError(f"LoRA targets '{config.lora_targets}' are not module names.",
                         hint=f"Use '{QUERY_VALUE}', '{ALL_LINEAR}' or comma-separated names such as query,key,value.")


def _base_prefix(model: Any) -> str:
    prefix = getattr(model, "base_model_prefix", "")
    if not prefix or not hasattr(model, prefix):
        raise InputError(f"A {type(model).__name__} has no encoder under a known name, so LoRA cannot target it.")
    return str(prefix)


def _linear_names(model: Any, prefix: str) -> set[str]:
    import torch

    return {name.rsplit(".", 1)[-1] for name, module in getattr(model, prefix).named_modules()
            if isinstance(module, torch.nn.Linear)}


def target_pattern(model: Any, targets: str) -> str:
    """peft's target_modules as a regex over the encoder's module names only (never the head's)."""
    prefix = _base_prefix(model)
    available = _linear_names(model, prefix)
    if targets == ALL_LINEAR:
        names = sorted(available)
    elif targets == QUERY_VALUE:
        names = list(family_for(model, "LoRA").query_value_names)
    else:
        names = [name.strip() for name in targets.split(",") if name.strip()]
    unknown = [name for name in names if name not in available]
    if unknown or not names:
        raise InputError(f"This {model.config.model_type} model has no linear layer named {', '.join(unknown)}.",
                         hint=f"Its encoder's linear layers: {', '.join(sorted(available))} (or '{ALL_LINEAR}').")
    return rf"{re.escape(prefix)}\..*\.({'|'.join(re.escape(n) for n in names)})"


def head_modules(model: Any) -> list[str]:
    """The head's modules (trained in full): every child outside the encoder with weights of its
    own; one sharing a weight with the encoder (a tied decoder) is split into its untied children."""
    prefix = _base_prefix(model)
    shared = {id(p) for p in getattr(model, prefix).parameters()}
    found: list[str] = []

    def visit(name: str, module: Any) -> None:
        params = list(module.parameters())
        if not params:
            return
        if not any(id(p) in shared for p in params):
            found.append(name)
            return
        for child, sub in module.named_children():
            visit(f"{name}.{child}", sub)

    for name, child in model.named_children():
        if name != prefix:
            visit(name, child)
    return found


def wrap(model: Any, settings: LoraSettings, base_source: str) -> Any:
    """The PeftModel that trains `settings`' adapter and the head; `base_source` is what the adapter
    folder names as its base (the user's Hub id or an absolute folder)."""
    from peft import LoraConfig, get_peft_model

    from bertstudio.core.adapter_folder import peft_quietly

    hidden = getattr(model.config, "hidden_size", None) or getattr(model.config, "dim", None)
    if isinstance(hidden, int) and settings.rank > hidden:  # a rank past the layers' width adds nothing but size
        raise InputError(f"LoRA rank {settings.rank} is more than the model's hidden size ({hidden}).",
                         hint=f"Use a rank of at most {hidden} (4 to 16 is usual).")
    lora = LoraConfig(r=settings.rank, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
                      target_modules=target_pattern(model, settings.targets),
                      modules_to_save=head_modules(model) or None, bias="none")
    with peft_quietly():
        wrapped = get_peft_model(model, lora)
    wrapped.peft_config["default"].base_model_name_or_path = base_source  # peft would write the loaded path
    return wrapped


def count(model: Any) -> LoraCount:
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    # a saved head's original copy is frozen but counted once: modules_to_save keeps both
    total = sum(p.numel() for name, p in model.named_parameters() if ".original_module." not in name
                and "lora_" not in name)
    return LoraCount(trainable, total)


def estimate(folder: Path, auto_class: str, labels: int, settings: LoraSettings) -> LoraCount:
    """The exact count before Start, from config.json alone: the model is built on the meta device."""
    import torch
    import transformers
    from transformers import AutoConfig

    from bertstudio.core.model_folder import load_pretrained

    config = load_pretrained(AutoConfig, folder, f"The configuration in '{folder}' cannot be loaded.")
    if labels > 0:
        config.num_labels = labels
    with torch.device("meta"):
        model = getattr(transformers, auto_class).from_config(config)
    return count(wrap(model, settings, str(folder)))


def base_source(source: str) -> str:
    """What an adapter folder names as its base: a Hub id as given, a folder as an absolute path."""
    path = Path(source).expanduser()
    return str(path.resolve()) if path.exists() else source


def save_head_config(model: Any, folder: Path) -> None:
    """The trained model's config (labels, head class) beside the adapter."""
    base = model.get_base_model()
    config = base.config
    config.architectures = [type(base).__name__]
    config.to_json_file(str(folder / HEAD_CONFIG))


# -- adapter folders --------------------------------------------------------------------------------
def merge_folder(adapter: str, output: str, control: Any = None) -> Path:
    """Write the adapter merged into its base as a plain full model folder (atomically, never over
    a folder that is not ours); the tokenizer and the task marker come along."""
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.training import saving
    from bertstudio.core.training.base import load_model_class

    control = control or TaskControl()
    folder = Path(adapter).expanduser()
    if not folder.exists():
        raise InputError(f"The adapter folder '{adapter}' does not exist.",
                         hint="Choose the output folder of a LoRA training run.")
    if not is_adapter_folder(folder):
        raise InputError(f"'{adapter}' is not a LoRA adapter folder (it needs adapter_config.json and no config.json).",
                         hint="Choose the output folder of a LoRA training run.")
    folder = folder.resolve()
    target = saving.check_output(output, replace=False)
    base = adapter_base(folder, control)
    config = head_config(folder, base)
    control.report(f"Loading the base model {base.name}…", None)
    model = load_model_class(model_class(config), base, config=config)
    control.check()
    control.report("Merging the adapter…", None)
    merged = apply(model, folder)
    tokenizer = _tokenizer(folder, base)
    control.check()
    marker = saving.read_marker(folder)
    partial = saving.partial_dir(target)
    saving.remove_ours(partial)
    with saving.saving_to(partial, where=target.parent):
        saving.write_marker(partial, "model", marker["task"] if marker else "merged")
        merged.save_pretrained(str(partial))
        tokenizer.save_pretrained(str(partial))
        saving.replace_folder(partial, target)
    control.report(f"Merged model saved to {target}", 1.0)
    return target


def _tokenizer(folder: Path, base: Path) -> Any:
    """The adapter folder's tokenizer (a run saves it there), else the base model's."""
    from transformers import AutoTokenizer

    from bertstudio.core.model_folder import load_pretrained

    source = tokenizer_folder(folder, base)
    return load_pretrained(AutoTokenizer, source, f"The tokenizer in '{source}' cannot be loaded.")


def estimate_for(source: str, task: str, settings: LoraSettings, control: Any = None) -> LoraCount:
    """What a run of `task` on `source` with `settings` would train (the Train form shows it before Start)."""
    from bertstudio.core.models import resolve_source
    from bertstudio.core.training.trainable import TRAINABLE

    trainable = TRAINABLE.get(task)
    if trainable is None or getattr(trainable, "distils", False) or not (trainable.auto_class or trainable.heads):
        raise InputError("This task cannot train a LoRA adapter.", hint="Set the LoRA rank to 0.")
    folder = resolve_source(source, control)
    return estimate(folder, trainable.auto_class or trainable.heads[0], 2, settings)


