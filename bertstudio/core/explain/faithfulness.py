"""How faithful an explanation is: ERASER's comprehensiveness and sufficiency (DeYoung et al. 2020).

For bin k (% of the non-special tokens), the top ceil(k% x n) tokens by attribution (highest
signed value first, ties by position) are deleted from the input (comprehensiveness = F(x) -
F(x without them)) or are all that is kept (sufficiency = F(x) - F(only them)). Deleted means
removed from the token sequence, not replaced; special tokens stay in both; the input is run
again with the same target; AOPC is the mean over the bins. A faithful explanation has a high
comprehensiveness (its top tokens carry the prediction) and a low sufficiency (they alone keep it).

Tasks whose F is read at a token (fill-mask's mask, NER's token, QA's answer start or end,
`Prepared.fixed`) keep that token in every input and count only the others; their token-level
outputs are put back at the original positions (a deleted position gets -inf, so it is no
candidate of QA's span softmax) before F is read. Multiple choice deletes from every choice and
pads the shorter choices (attention mask 0). Similarity's F (a cosine of A's pooled states)
reads no position: a shortened A is pooled as it is. A value that is not a number (the model's
output on a shortened input) is undefined: None (JSON null) with a note, never a silent NaN. Each
input runs alone through `engine.run` (no padding: the numbers of the input alone).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bertstudio.core import engine, notes
from bertstudio.core.explain.methods import FAITHFULNESS_BINS
from bertstudio.core.explain.targets import Prepared
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl


@dataclass(frozen=True)
class Faithfulness:
    bins: tuple[int, ...]  # % of the non-special tokens
    comprehensiveness: tuple[float | None, ...]  # per bin: F(x) - F(x without the top tokens); None: undefined
    sufficiency: tuple[float | None, ...]  # per bin: F(x) - F(only the top tokens); None: undefined
    score: float  # F(x), the full input run the same way
    tokens: int  # n: the tokens the bins count

    @property
    def aopc_comprehensiveness(self) -> float | None:
        return _mean(self.comprehensiveness)

    @property
    def aopc_sufficiency(self) -> float | None:
        return _mean(self.sufficiency)

    def to_json(self) -> dict[str, object]:
        return {"bins": list(self.bins), "comprehensiveness": list(self.comprehensiveness),
                "sufficiency": list(self.sufficiency), "aopc_comprehensiveness": self.aopc_comprehensiveness,
                "aopc_sufficiency": self.aopc_sufficiency}


def _mean(values: Sequence[float | None]) -> float | None:
    """AOPC: the mean over the bins, undefined (None) when a bin is."""
    known = [v for v in values if v is not None]
    return sum(known) / len(values) if values and len(known) == len(values) else None


def _defined(value: float) -> float | None:
    return value if math.isfinite(value) else None


def top_count(percent: int, n: int) -> int:
    """ceil(percent% of n) in whole numbers (no float rounding: 10% of 30 is 3, not 4)."""
    return -(-percent * n // 100)


def ranked(prepared: Prepared, attributions: Sequence[float]) -> list[int]:
    """The flat positions the bins count (not special, not fixed), highest attribution first.
    `attributions` are an Explanation's: one per shown position (`prepared.keep`)."""
    value = dict(zip(prepared.keep, attributions, strict=True))
    fixed = set(prepared.fixed)
    counted = [i for i in prepared.keep if not prepared.special[i] and i not in fixed]
    return sorted(counted, key=lambda i: (-value[i], i))


def without(loaded: LoadedModel, prepared: Prepared, dropped: set[int]) -> tuple[dict[str, Any], list[int]]:
    """The model inputs with the flat positions `dropped` (and padding) removed, and the flat
    positions kept, in order. Sequences of unequal length (choices) are padded on the right."""
    import torch

    ids = prepared.inputs["input_ids"]
    width = ids.shape[-1]
    attended = set(prepared.keep)
    kept = [i for i in range(ids.numel()) if i in attended and i not in dropped]
    per_row = [[i % width for i in kept if i // width == r] for r in range(ids.numel() // width)]
    longest = max(len(r) for r in per_row)
    pad = loaded.tokenizer.pad_token_id or 0
    shortened = {}
    for name, tensor in prepared.inputs.items():
        rows = tensor.reshape(-1, width)
        filler = pad if name == "input_ids" else 0
        out = torch.full((rows.shape[0], longest), filler, dtype=tensor.dtype, device=tensor.device)
        for r, columns in enumerate(per_row):
            out[r, :len(columns)] = rows[r, columns]
        shortened[name] = out.reshape(*tensor.shape[:-1], longest)
    return shortened, kept


def restored(outputs: Any, kept: list[int], width: int) -> Any:
    """Token-level outputs (one value per position) of a shortened single sequence put back at the original
    positions (-inf where a token was deleted), so F reads the same position as on the full input."""
    import torch

    short = len(kept)
    if short == width:
        return outputs
    fields = {}
    for name, value in outputs.items():
        if isinstance(value, torch.Tensor) and value.dim() >= 2 and value.shape[1] == short:
            back = torch.full((value.shape[0], width, *value.shape[2:]), float("-inf"), dtype=value.dtype,
                              device=value.device)
            back[:, kept] = value
            fields[name] = back
        else:
            fields[name] = value
    return type(outputs)(**fields)


def measure(loaded: LoadedModel, prepared: Prepared, attributions: Sequence[float], control: TaskControl,
            bins: Sequence[int] = FAITHFULNESS_BINS) -> tuple[Faithfulness | None, tuple[Note, ...]]:
    """Comprehensiveness and sufficiency of `attributions` (see the module docstring); None and a
    note where no token can be deleted."""
    order = ranked(prepared, attributions)
    n = len(order)
    if n == 0:
        return None, (notes.info("Faithfulness needs at least one token besides the special and target tokens."),)
    ids = prepared.inputs["input_ids"]
    width = ids.shape[-1]
    restore = ids.numel() == width and bool(prepared.fixed)  # one sequence, F read at a position
    tops = [set(order[:top_count(k, n)]) for k in bins]
    # the full input (its own inputs: none dropped), then per bin: without the top tokens, only them
    variants = [(prepared.inputs, []), *(without(loaded, prepared, d) for top in tops for d in (top, set(order) - top))]

    def forward(batch: engine.Batch) -> Any:
        inputs, kept = variants[int(batch.rows[0])]
        outputs = loaded.model(**inputs)
        return prepared.probability(restored(outputs, kept, width) if restore and kept else outputs)[:1]

    ran = engine.run(loaded, engine.rows([v[0]["input_ids"].reshape(-1).tolist() for v in variants]), forward, control,
                     max_rows=1, weights=None, verb=f"Faithfulness of {n} tokens: ran", unit="inputs")
    full = float(ran[0])
    comprehensiveness = [_defined(full - float(v)) for v in ran[1::2]]
    sufficiency = [_defined(full - float(v)) for v in ran[2::2]]
    found: tuple[Note, ...] = ()
    if None in (*comprehensiveness, *sufficiency):
        found += (notes.warning(f"Some faithfulness values are undefined (shown as –, null in JSON): "
                                f"{prepared.target_label} is not a number for the input with those tokens deleted."),)
    shown = [prepared.tokens[i] for i in prepared.fixed if not prepared.special[i]]
    if shown:
        found += (notes.info(f"Faithfulness keeps the explained token {', '.join(repr(t) for t in shown)} in every "
                            f"input (F is read there); its bins count the other {n} tokens."),)
    return Faithfulness(tuple(bins), tuple(comprehensiveness), tuple(sufficiency), full, n), found
