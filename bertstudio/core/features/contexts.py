"""What each feature fires on in the corpus it was trained on: its top-activating contexts, how
often it fires and the histogram of its values, computed once when the SAE is saved.

The corpus index (core/corpus) keeps unit-length token vectors for cosine search, and an SAE's
features depend on a state's length, so the activations are taken here from the states the SAE was
trained on; what is reused is the corpus file's reader and the corpus page's way of showing a
line with its matched token (`corpus.query.Neighbour`, `excerpt`). Stored beside the SAE as
contexts.safetensors (numbers) and contexts.json (the lines and tokens they point to).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bertstudio.core.errors import InputError
from bertstudio.core.features import store
from bertstudio.core.features.sae import Codes

TOP = 20  # contexts kept per feature
BINS = 24  # histogram bins from 0 to the feature's largest value
TENSORS = "contexts.safetensors"
DOCUMENT = "contexts.json"


@dataclass(frozen=True)
class Contexts:
    """Per feature: its top entries (m, TOP: -1 = none) and values, histogram (m, BINS) from 0 to
    `largest`, and the share of corpus tokens it fires on; `entries` are (line, position, token,
    start, end) with `line` an index into `lines`."""

    top_entry: np.ndarray
    top_value: np.ndarray
    histogram: np.ndarray
    largest: np.ndarray
    frequency: np.ndarray
    lines: tuple[str, ...]
    line_numbers: tuple[int, ...]
    entries: tuple[tuple[int, int, str, int, int], ...]

    def top(self, feature: int, count: int = TOP) -> list[Any]:
        """Its top contexts as corpus Neighbours (score = the feature's value), largest first."""
        from bertstudio.core.corpus.query import Neighbour

        found = []
        for entry, value in zip(self.top_entry[feature][:count].tolist(), self.top_value[feature][:count].tolist(),
                                strict=True):
            if entry < 0:
                break
            line, position, token, start, end = self.entries[entry]
            found.append(Neighbour(self.line_numbers[line], float(value), self.lines[line], position, token,
                                   (start, end)))
        return found


def build(codes: Codes, m: int, text: np.ndarray, position: np.ndarray, tokens: Sequence[str], spans: np.ndarray,
          texts: Sequence[str], line_numbers: Sequence[int]) -> Contexts:
    """The contexts of every feature from the codes of every corpus token (N, k) and where each token is."""
    rows, slots = np.nonzero(codes.values > 0)
    features = codes.ids[rows, slots]
    values = codes.values[rows, slots].astype(np.float32)
    frequency = np.bincount(features, minlength=m).astype(np.float32) / max(1, codes.ids.shape[0])
    largest = np.zeros(m, np.float32)
    np.maximum.at(largest, features, values)
    bins = np.minimum(BINS - 1, (values / np.maximum(largest[features], 1e-12) * BINS).astype(np.int64))
    histogram = np.zeros((m, BINS), np.int32)
    np.add.at(histogram, (features, bins), 1)
    order = np.lexsort((-values, features))  # by feature, then largest value first
    features, values, rows = features[order], values[order], rows[order]
    starts = np.searchsorted(features, np.arange(m))
    rank = np.arange(len(features)) - starts[features]
    keep = rank < TOP
    top_entry = np.full((m, TOP), -1, np.int32)
    top_value = np.zeros((m, TOP), np.float32)
    kept_rows = rows[keep]
    unique_rows, entry_of = np.unique(kept_rows, return_inverse=True)
    top_entry[features[keep], rank[keep]] = entry_of.astype(np.int32)
    top_value[features[keep], rank[keep]] = values[keep]
    used_lines, line_of = np.unique(text[unique_rows], return_inverse=True)
    entries = tuple((int(line_of[n]), int(position[r]), str(tokens[r]), int(spans[r, 0]), int(spans[r, 1]))
                    for n, r in enumerate(unique_rows.tolist()))
    return Contexts(top_entry, top_value, histogram, largest, frequency, tuple(texts[i] for i in used_lines.tolist()),
                    tuple(int(line_numbers[i]) for i in used_lines.tolist()), entries)


def saved(contexts: Contexts) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    arrays = {"top_entry": contexts.top_entry, "top_value": contexts.top_value, "histogram": contexts.histogram,
              "largest": contexts.largest, "frequency": contexts.frequency}
    return arrays, {"lines": list(contexts.lines), "line_numbers": list(contexts.line_numbers),
                    "entries": [list(e) for e in contexts.entries]}


def load(folder: Path, m: int) -> Contexts:
    """The contexts stored in an SAE folder with m features, checked field by field."""
    arrays = store.read_tensors(folder / TENSORS, {"top_entry": (m, TOP), "top_value": (m, TOP),
                                                   "histogram": (m, BINS), "largest": (m,), "frequency": (m,)},
                                "feature contexts file")
    path = folder / DOCUMENT
    data = store.read_json(path, "feature contexts file")
    lines = store.field(data, "lines", list, path, lambda v: all(isinstance(x, str) for x in v))
    numbers = store.field(data, "line_numbers", list, path,
                          lambda v: len(v) == len(lines) and all(isinstance(x, int) and x > 0 for x in v))
    entries = store.field(data, "entries", list, path)
    checked = []
    for entry in entries:
        if not (isinstance(entry, list) and len(entry) == 5 and isinstance(entry[2], str)
                and all(isinstance(entry[i], int) and not isinstance(entry[i], bool) for i in (0, 1, 3, 4))
                and 0 <= entry[0] < len(lines) and entry[1] >= 0 and 0 <= entry[3] <= entry[4] <= len(lines[entry[0]])):
            raise InputError(f"'{path}' has a malformed entry ({str(entry)[:60]}).",
                             hint="The folder was damaged or edited; train the SAE again.")
        checked.append((entry[0], entry[1], entry[2], entry[3], entry[4]))
    top = arrays["top_entry"]
    if top.dtype.kind != "i" or int(top.min(initial=-1)) < -1 or int(top.max(initial=-1)) >= len(checked):
        raise InputError(f"'{folder / TENSORS}' points at contexts that '{path.name}' does not hold.",
                         hint="The folder was damaged or edited; train the SAE again.")
    return Contexts(top.astype(np.int64), arrays["top_value"].astype(np.float32),
                    arrays["histogram"].astype(np.int64), arrays["largest"].astype(np.float32),
                    arrays["frequency"].astype(np.float32), tuple(lines), tuple(numbers), tuple(checked))
