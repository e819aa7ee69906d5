"""The one validating reader of a model folder, run before transformers or torch see it.

transformers trusts config.json: `num_hidden_layers: 1000000` builds a million layers (the
load, or the models-folder listing, hangs with memory growing), `num_labels: 10**9` builds a
billion-entry label dict, `"architectures": 5` crashes the listing, a FIFO named config.json
or tokenizer.json never ends a read, and a folder without tokenizer files loads an empty
tokenizer that turns every word into [UNK]. Here each of these is refused with a message that
names the file or field and the bound, and the model's size is estimated from the config
before anything is allocated.
"""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError, ModelSourceError
from bertstudio.core.files import read_text
from bertstudio.core.limits import MAX_HIDDEN, MAX_JSON_DEPTH, MAX_LAYERS, MAX_PARAMETERS, as_int

MAX_CONFIG_BYTES = 8 * 1024 * 1024  # id2label of ~100k labels fits; a config is never larger
MAX_FOLDER_ENTRIES = 10_000  # files in one model folder (a checkpoint has a dozen)
MAX_VOCAB = 4_000_000
MAX_HEADS = 1024
MAX_INTERMEDIATE = 4 * MAX_HIDDEN
MAX_POSITIONS = 1 << 20
MAX_TYPE_VOCAB = 1024
MAX_LABELS = 100_000

# (the names transformers uses for it across BERT-family configs, what it is, low, high)
FIELDS: tuple[tuple[tuple[str, ...], int, int], ...] = (
    (("num_hidden_layers", "n_layers", "num_layers", "n_layer"), 1, MAX_LAYERS),
    (("num_hidden_groups",), 1, MAX_LAYERS),
    (("hidden_size", "dim", "d_model", "n_embd"), 1, MAX_HIDDEN),
    (("embedding_size",), 1, MAX_HIDDEN),
    (("num_attention_heads", "n_heads", "n_head"), 1, MAX_HEADS),
    (("intermediate_size", "hidden_dim", "ffn_dim", "n_inner"), 1, MAX_INTERMEDIATE),
    (("vocab_size",), 1, MAX_VOCAB),
    (("max_position_embeddings", "n_positions"), 1, MAX_POSITIONS),
    (("type_vocab_size",), 0, MAX_TYPE_VOCAB),
    (("num_labels",), 1, MAX_LABELS),
)
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json")  # or any *.model (SentencePiece)
TOKENIZER_TEXT_FILES = ("merges.txt", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")
# A tokenizer file is read whole into memory: the largest real ones (multilingual tokenizer.json) are
# tens of MiB; a sparse 8 GiB vocab.txt would be 8 GiB of memory before anything says no.
MAX_TOKENIZER_BYTES = 256 * 1024 * 1024
TOKENIZER_HINT = ("A model folder needs its tokenizer: tokenizer.json, or vocab.txt (BERT), vocab.json + "
                  "merges.txt (RoBERTa) or a SentencePiece *.model (ALBERT). Copy them from the model "
                  "the checkpoint was trained from.")


@dataclass(frozen=True)
class FolderCheck:
    """What the reader found: the config (a checked dict) and the parameters it implies."""

    config: dict[str, Any]
    parameters: int


def _depth(value: Any) -> int:
    """Nesting depth without recursion (a deep config must not overflow our own stack)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_JSON_DEPTH:
            break
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, level + 1) for child in children)
    return deepest


def read_config(folder: Path) -> dict[str, Any]:
    """config.json as a checked dict: a regular file of bounded size, UTF-8 JSON, an object, not
    deeply nested, every size field a whole number within its bound."""
    path = folder / "config.json"
    try:
        text = read_text(path, "config.json", MAX_CONFIG_BYTES)
    except InputError as error:
        raise ModelSourceError(error.message,
                               hint=error.hint or "Choose a folder saved with save_pretrained.") from None
    try:
        config = json.loads(text)
    except RecursionError:
        raise ModelSourceError(f"The config.json in '{folder}' is nested too deeply to be a model config.") from None
    except ValueError as error:
        raise ModelSourceError(f"The config.json in '{folder}' is not valid JSON ({error}).",
                               hint="Check that the folder holds a model saved with save_pretrained.") from None
    if not isinstance(config, dict):
        raise ModelSourceError(f"The config.json in '{folder}' is not a JSON object (it is a {type(config).__name__}).",
                               hint="Check that the folder holds a model saved with save_pretrained.")
    if _depth(config) > MAX_JSON_DEPTH:
        raise ModelSourceError(f"The config.json in '{folder}' is nested more than {MAX_JSON_DEPTH} levels deep.")
    check_fields(config, folder)
    return config


def _refuse(folder: Path, problem: str, hint: str = "") -> ModelSourceError:
    return ModelSourceError(f"The config.json in '{folder}' {problem}.",
                            hint=hint or "Fix the field or choose another model folder.")


def check_fields(config: dict[str, Any], folder: Path) -> None:
    """Types of the fields transformers and the listing read; every size bounded (a bad one names itself)."""
    for names, low, high in FIELDS:
        for name in names:
            value = config.get(name)
            if value is None:
                continue
            if isinstance(value, str) or not _whole(value):
                raise _refuse(folder, f"has {name} = {str(value)[:40]!r}; it must be a whole number")
            if not low <= value <= high:
                raise _refuse(folder, f"has {name} = {value:,}; it must be between {low:,} and {high:,}",
                              hint=f"BERT Studio loads models of at most {MAX_LAYERS} layers, hidden size "
                                   f"{MAX_HIDDEN:,} and {MAX_PARAMETERS / 1e9:.0f} billion parameters.")
    for name in ("model_type",):
        if name in config and not isinstance(config[name], str):
            raise _refuse(folder, f"has a {name} that is not a string ({str(config[name])[:40]!r})")
    architectures = config.get("architectures")
    if architectures is not None and not (
            isinstance(architectures, list) and all(isinstance(a, str) for a in architectures)):
        raise _refuse(folder, "has an 'architectures' field that is not a list of class names")
    for name in ("id2label", "label2id", "auto_map"):
        value = config.get(name)
        if value is not None and not isinstance(value, dict):
            raise _refuse(folder, f"has a {name} that is not an object")
        if value is not None and len(value) > MAX_LABELS:
            raise _refuse(folder, f"has {len(value):,} entries in {name}; at most {MAX_LABELS:,} are read")
    for key in config.get("id2label") or {}:
        try:
            as_int(key, "id2label key")
        except InputError:
            raise _refuse(folder, f"has an id2label key {str(key)[:20]!r} that is not a whole number") from None
    parameters = estimate_parameters(config)
    if parameters > MAX_PARAMETERS:
        raise _refuse(folder, f"describes a model of about {parameters / 1e9:,.0f} billion parameters; "
                              f"at most {MAX_PARAMETERS / 1e9:,.0f} billion are loaded",
                      hint="Choose a smaller model.")


def _whole(value: Any) -> bool:
    try:
        as_int(value, "field")
    except InputError:
        return False
    return isinstance(value, int)


def _first(config: dict[str, Any], names: tuple[str, ...], default: int) -> int:
    for name in names:
        value = config.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return default


def estimate_parameters(config: dict[str, Any]) -> int:
    """A BERT-family model's parameters from its config, within a few percent (missing fields take
    BERT-base's defaults; ALBERT's shared layers are counted once per layer, so it errs high there)."""
    layers = _first(config, FIELDS[0][0], 12)
    hidden = _first(config, FIELDS[2][0], 768)
    embedding = _first(config, FIELDS[3][0], hidden)
    intermediate = _first(config, FIELDS[5][0], 4 * hidden)
    vocab = _first(config, FIELDS[6][0], 30_522)
    positions = _first(config, FIELDS[7][0], 512)
    types = _first(config, FIELDS[8][0], 2)
    labels = max(_first(config, FIELDS[9][0], 2), len(config.get("id2label") or {}))
    embeddings = (vocab + positions + types) * embedding + (embedding * hidden if embedding != hidden else 0)
    per_layer = 4 * hidden * hidden + 2 * hidden * intermediate + 9 * hidden + intermediate
    heads = 2 * hidden * hidden + 8 * hidden + vocab + hidden * labels  # pooler, MLM transform, classifier
    return embeddings + layers * per_layer + heads


def _entries(folder: Path) -> list[Path]:
    entries = []
    try:
        for entry in folder.iterdir():
            entries.append(entry)
            if len(entries) > MAX_FOLDER_ENTRIES:
                raise ModelSourceError(f"'{folder}' holds more than {MAX_FOLDER_ENTRIES:,} files; "
                                       "it is not a model folder.", hint="Choose the folder that holds config.json.")
    except OSError as error:
        raise ModelSourceError(f"'{folder}' cannot be read: {error.strerror or error}.") from None
    return entries


def _check_regular(entries: list[Path]) -> None:
    """A FIFO or device named like a model file would block the loader's read forever."""
    for entry in entries:
        try:
            mode = entry.stat().st_mode
        except OSError as error:
            raise ModelSourceError(f"'{entry}' cannot be read: {error.strerror or error}.") from None
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise ModelSourceError(f"'{entry}' in the model folder is not a regular file (a pipe, device or "
                                   "socket), so it cannot be read.", hint="Replace it with the real file.")


def _check_tokenizer_sizes(entries: list[Path]) -> None:
    for entry in entries:
        if entry.name in TOKENIZER_FILES + TOKENIZER_TEXT_FILES or entry.suffix == ".model":
            try:
                size = entry.stat().st_size
            except OSError as error:
                raise ModelSourceError(f"'{entry}' cannot be read: {error.strerror or error}.") from None
            if size > MAX_TOKENIZER_BYTES:
                raise ModelSourceError(
                    f"The tokenizer file '{entry}' is {size / 2**20:,.0f} MiB; at most "
                    f"{MAX_TOKENIZER_BYTES / 2**20:,.0f} MiB is read (real tokenizers are a few MiB).",
                    hint=TOKENIZER_HINT)


def tokenizer_files(entries: list[Path]) -> list[str]:
    return sorted(e.name for e in entries if e.name in TOKENIZER_FILES or e.suffix == ".model")


def has_weights(entries: list[Path]) -> bool:
    return any(e.name.endswith((".safetensors", ".safetensors.index.json")) or
               (e.name.startswith("pytorch_model") and e.name.endswith((".bin", ".bin.index.json")))
               for e in entries)


def check_folder(folder: Path) -> FolderCheck:
    """The whole folder, before any loading: config (read_config), no special files, tokenizer
    files present and of a readable size, weights present. Raises ModelSourceError naming what is wrong or missing."""
    entries = _entries(folder)
    _check_regular(entries)
    config = read_config(folder)
    if not has_weights(entries):
        raise ModelSourceError(
            f"'{folder}' has a config.json but no PyTorch weights (model.safetensors or pytorch_model.bin).",
            hint="TensorFlow/Flax-only checkpoints must be converted first.",
        )
    if not tokenizer_files(entries):
        raise ModelSourceError(
            f"'{folder}' has no tokenizer files (tokenizer.json, vocab.txt, vocab.json or a *.model), so every "
            "word would become [UNK] and the results would be meaningless.", hint=TOKENIZER_HINT)
    _check_tokenizer_sizes(entries)
    return FolderCheck(config=config, parameters=estimate_parameters(config))


def load_pretrained(loader: Any, folder: Path, failure: str, hint: str = "") -> Any:
    """`loader.from_pretrained(folder)` with no remote code ever run; any failure (a broken file,
    custom code) is one ModelSourceError: `failure`, `hint`, the error itself in the details."""
    try:
        return loader.from_pretrained(folder, trust_remote_code=False)
    except Exception as error:  # noqa: BLE001 - any loader failure is the folder's, told in one message
        raise ModelSourceError(failure, hint=hint, details=repr(error)) from error
