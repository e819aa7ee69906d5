"""An SAE folder: sae.safetensors (W_enc (d, m), b_enc (m), W_dec (m, d), b_dec (d)), sae.json (what
it was trained on and how well it does), and the corpus contexts of its features (contexts.py).

`load(folder)` reads and checks all of it; `check_model(found, loaded, layer)` refuses an SAE on a
model or layer it was not trained for, in one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.features import store
from bertstudio.core.features.contexts import Contexts
from bertstudio.core.features.sae import ACTIVATION, MAX_FEATURES, Sae

WEIGHTS = "sae.safetensors"
INFO = "sae.json"
KIND = "sparse autoencoder"
FORMAT = 1


@dataclass(frozen=True)
class SaeInfo:
    """sae.json: the model and layer, the sizes, and the held-out quality."""

    model: str
    layer: int
    d: int
    m: int
    k: int
    fraction_of_variance_explained: float
    l0: float
    dead_features: int
    record: dict[str, Any]  # every field of sae.json, as written

    @property
    def dead_share(self) -> float:
        return self.dead_features / self.m if self.m else 0.0


@dataclass(frozen=True)
class SaeFolder:
    path: Path
    info: SaeInfo
    sae: Sae
    contexts: Contexts | None  # None where the folder has none (written by other code)


def info_of(path: Path) -> SaeInfo:
    record = store.read_json(path, "SAE description")
    positive = lambda v: v > 0  # noqa: E731
    if record.get("activation") != ACTIVATION:
        raise InputError(f"'{path}' describes a {str(record.get('activation'))[:20]!r} SAE; only TopK ('topk') "
                         "SAEs are read.")
    d = store.field(record, "d", int, path, positive)
    m = store.field(record, "m", int, path, lambda v: 0 < v <= MAX_FEATURES)
    return SaeInfo(store.field(record, "model", str, path, bool), store.field(record, "layer", int, path,
                                                                                lambda v: v >= 0),
                   d, m, store.field(record, "k", int, path, lambda v: 0 < v <= m),
                   float(store.field(record, "fraction_of_variance_explained", (int, float), path)),
                   float(store.field(record, "l0", (int, float), path, lambda v: v >= 0)),
                   store.field(record, "dead_features", int, path, lambda v: 0 <= v <= m), record)


def load(folder: str | Path) -> SaeFolder:
    """The SAE in `folder`, every file checked (shapes against sae.json, finite numbers)."""
    from bertstudio.core.features import contexts

    place = store.folder(folder, "SAE", (WEIGHTS, INFO))
    info = info_of(place / INFO)
    d, m = info.d, info.m
    arrays = store.read_tensors(place / WEIGHTS, {"W_enc": (d, m), "b_enc": (m,), "W_dec": (m, d), "b_dec": (d,)},
                                "SAE weights file")
    for name, array in arrays.items():
        if array.dtype.kind != "f":
            raise InputError(f"'{place / WEIGHTS}' holds {name} as {array.dtype}, not floating point numbers.")
    sae = Sae(arrays["W_enc"].astype("float32"), arrays["b_enc"].astype("float32"), arrays["W_dec"].astype("float32"),
              arrays["b_dec"].astype("float32"), info.k)
    found = contexts.load(place, m) if (place / contexts.TENSORS).exists() else None
    return SaeFolder(place, info, sae, found)


def check_model(found: SaeFolder, loaded: Any, layer: int | None = None) -> None:
    """One line when `loaded` is not the model the SAE was trained on, or `layer` not its layer."""
    info = found.info
    if not store.same_model(info.record, loaded):
        raise InputError(f"The SAE in '{found.path}' was trained on {info.model}, not on "
                         f"{loaded.info.request.source}.", hint="Load that model, or train an SAE for this one.")
    width = store.model_identity(loaded)["hidden_size"]
    if width and width != info.d:
        raise InputError(f"The SAE in '{found.path}' reads states of width {info.d}; "
                         f"{loaded.info.request.source} has {width}.")
    if layer is not None and layer != info.layer:
        raise InputError(f"The SAE in '{found.path}' was trained on layer {info.layer}, not layer {layer}.",
                         hint=f"Use layer {info.layer}, or train an SAE on layer {layer}.")
