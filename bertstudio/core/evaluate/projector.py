"""The embedding projector's numbers: one vector per row at any layer, projected to 2-D.

Vectors come from the task model's encoder (`base_model`, so every head reads the same), as
the [CLS] vector or the mean over real tokens, at a chosen hidden-state layer (0 = embeddings).
PCA is scikit-learn's; UMAP is used only where `umap` is installed (extra "projector").
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.readers import Dataset
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import EvaluateAdapter, adapter_for

POOLINGS = ("cls", "mean")


def methods() -> tuple[str, ...]:
    """Projections available here: PCA always, UMAP where umap-learn is installed."""
    return ("pca", "umap") if importlib.util.find_spec("umap") is not None else ("pca",)


@dataclass(frozen=True)
class Projection:
    points: np.ndarray = field(compare=False)  # (rows, 2) float32
    method: str
    layer: int
    pooling: str
    explained: tuple[float, ...] = ()  # PCA: share of variance of each axis
    vectors: np.ndarray | None = field(default=None, compare=False, repr=False)  # (rows, hidden), for nearest rows

    def to_json(self) -> dict[str, object]:
        return {"method": self.method, "layer": self.layer, "pooling": self.pooling,
                "explained": list(self.explained), "points": self.points.tolist()}


def embed(loaded: LoadedModel, dataset: Dataset, layer: int = -1, pooling: str = "cls", batch_size: int | None = None,
          control: TaskControl | None = None) -> np.ndarray:
    """(rows, hidden) float32: each row's [CLS] or mean-pooled hidden state at `layer` (negative: from the top);
    at most `batch_size` rows per forward, by default as many as the engine's token budget holds."""
    from bertstudio.core import engine

    if pooling not in POOLINGS:
        raise InputError(f"Unknown pooling {pooling!r}.", hint=f"Choose one of {', '.join(POOLINGS)}.")
    layers = (loaded.info.layers or 0) + 1
    if not -layers <= layer < layers:
        raise InputError(f"Layer {layer} does not exist: this model has hidden states 0..{layers - 1}.")
    encoder = loaded.model.base_model
    pair_of = adapter_for(dataset.task, EvaluateAdapter).pair_of  # the text (pair) its spec says a row is
    pairs = [pair_of(x) for x in dataset.examples]
    seconds = [b or "" for _, b in pairs] if any(b for _, b in pairs) else None

    def forward(batch: engine.Batch) -> Any:
        states = encoder(**batch.inputs, output_hidden_states=True).hidden_states[layer].float()
        if pooling == "cls":
            return states[:, 0]
        mask = batch.inputs["attention_mask"].unsqueeze(-1).to(states.dtype)
        return (states * mask).sum(1) / mask.sum(1).clamp(min=1)

    _, found = engine.encode_run(loaded, [a for a, _ in pairs], seconds, forward, control, max_rows=batch_size,
                                 verb="Embedded")
    return np.stack(found).astype(np.float32) if found else np.zeros((0, loaded.info.hidden_size or 0), np.float32)


def project(vectors: np.ndarray, method: str = "pca", seed: int = 0) -> tuple[np.ndarray, tuple[float, ...]]:
    """(rows, 2) coordinates of `vectors`; PCA also says how much variance each axis keeps."""
    if len(vectors) < 3:
        raise InputError("The projector needs at least three rows.")
    if method == "pca":
        from sklearn.decomposition import PCA

        pca = PCA(n_components=2, random_state=seed)
        points = pca.fit_transform(vectors)
        return points.astype(np.float32), tuple(float(v) for v in pca.explained_variance_ratio_)
    if method == "umap":
        if "umap" not in methods():
            raise InputError("UMAP is not installed.", hint="pip install 'bertstudio[projector]', or use PCA.")
        import umap

        reducer = umap.UMAP(n_components=2, random_state=seed, n_neighbors=min(15, len(vectors) - 1))
        return np.asarray(reducer.fit_transform(vectors), dtype=np.float32), ()
    raise InputError(f"Unknown projection {method!r}.", hint=f"Choose one of {', '.join(methods())}.")


def projection(loaded: LoadedModel, dataset: Dataset, layer: int = -1, pooling: str = "cls", method: str = "pca",
               control: TaskControl | None = None) -> Projection:
    vectors = embed(loaded, dataset, layer, pooling, control=control)
    points, explained = project(vectors, method)
    layers = (loaded.info.layers or 0) + 1
    return Projection(points, method, layer % layers, pooling, explained, vectors)
