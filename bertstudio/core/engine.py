"""The one engine for every batch of inputs: evaluate, corpus indexing, counterfactual scoring, the
task tabs' batch runs, Explain's perturbed copies and faithfulness, patching's patched copies.

transformers' pipeline pads each fixed-size batch of rows (32) to its longest row, in input order:
on a review-like mix (4-480 words) most of every batch is padding. Here the rows are tokenized once
(fast tokenizer, in chunks with a cancel check between, on the tokenizer's own threads: neither the CLI
nor the window sets TOKENIZERS_PARALLELISM, 1.7x on 2 cores), sorted by length, grouped under a budget of
*padded tokens* (not a row count), padded per batch, run, and put back in input order. The model
lock and `torch.inference_mode()` are taken here for the whole run, and nowhere else: one input's
forward holds `exclusive`, a job of several steps on one model (a search, an export, heads switched
off) holds `holding` (the lock only: its steps take inference mode), a backward pass
`exclusive(loaded, grad=True)` (tests/test_forward_path.py names who holds which).

- `encode_all(loaded, texts, pairs)` -> `Encoded`: token ids per row, no padding, cut rows recorded.
- `batches(encoded, token_budget, max_rows)` -> row groups, longest first (an out-of-memory shows on
  the first batch, not the last).
- `run(loaded, encoded, forward, control)` -> one result per row, in input order. `forward(batch)`
  maps a padded batch on the model's device to tensors with one row per input row; they reach the host
  as numpy (float32 or wider) while the next batch is padded and sent (on CUDA: pinned, non_blocking).
- `rows(ids)` -> `Encoded` of token id rows the caller built (perturbed copies of one input).
- `exclusive(loaded, grad=False)`: the lock for one input's forward (inference mode), or with
  `grad=True` for gradient code (captum, head gates, a tuned lens); its batches still go through `run`.

The attention kernel: unless the caller reads attention weights (`weights=True`), a model loaded with
eager attention (the Attention task loads it so) runs the batch with sdpa, and is set back afterwards;
results equal eager's to float32 rounding (`weights=None`: the kernel as loaded). Half precision is the
model's own dtype (the user's choice at load time); outputs are widened to float32 on the host.

torch and numpy are imported inside the functions: nothing here runs before the window shows.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    import numpy as np

    from bertstudio.core.models import LoadedModel

CHUNK = 1024  # rows per tokenizer call: one call over 100,000 rows kept Cancel and Ctrl+C waiting for seconds
# Padded tokens per forward. CPU: measured with bench/bench_engine.py's review-like mix (one thread's
# CPU time, 2-core machine under load): BERT-base-sized, 48 rows: 9.3 s at 512 tokens, 10.8 s at
# 1024, 14.0 s at 2048, 17.3 s at 4096 (attention grows with the square of the padded width, big
# batches leave the caches); MiniLM, 96 rows: flat from 512 to 2048 (3.3-3.4 s), +15% at 4096.
# 1024: near the best here and not starved on a CPU with more cores; one forward stays well under a
# second, so Cancel lands soon. GPU: enough rows to fill an H100 with a BERT-base-sized model, small
# enough for its memory in float32.
CPU_TOKEN_BUDGET = 1024
GPU_TOKEN_BUDGET = 16384
MAX_ROWS = 256  # rows per forward at most, whatever the budget (short rows: the per-row work still grows)
# CUDA: batches whose results may still be on their way to the host. An older one is read (`rows_of`
# shrinks it: a corpus keeps some tokens' vectors, a lens some positions) while the next are queued, so
# the GPU never waits and whole padded outputs never pile up in pinned host memory.
IN_FLIGHT = 2
# Padded widths on CUDA are rounded up to a multiple of this (never past the model's length): aligned for
# the tensor cores and the memory-efficient kernel's mask. Not more: with cuDNN attention left out
# (devices.settle_attention_kernels) no kernel is built per shape, and each step costs padding. On 4,096
# review-like rows at the GPU budget (tokens padded / real): exact widths 1.07 (26 shapes), 8: 1.12 (24),
# 32: 1.26 (13), 64: 1.47 (9). bench/gpu_check.py's `tune` stage measures 8 against 32 on the GPU.
GPU_WIDTH_MULTIPLE = 8


@dataclass(frozen=True)
class Encoded:
    """Every row tokenized once, unpadded: what `batches` sorts and `run` pads."""

    input_ids: list[list[int]]
    token_type_ids: list[list[int]] | None  # None where the model takes none (DistilBERT, RoBERTa)
    cut: tuple[int, ...]  # rows longer than the model reads: cut to its length
    max_length: int
    # Per row, where asked: "special_tokens_mask" (list[int]), "offset_mapping" (list[tuple[int, int]]).
    extras: dict[str, list[Any]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def lengths(self) -> np.ndarray:
        import numpy as np

        return np.fromiter((len(row) for row in self.input_ids), dtype=np.int64, count=len(self.input_ids))


@dataclass(frozen=True)
class Batch:
    """One padded batch on the model's device: `rows` are positions in the input order."""

    rows: np.ndarray
    inputs: dict[str, Any]  # input_ids, attention_mask (and token_type_ids) as tensors on the device
    lengths: np.ndarray  # real tokens per row (the rest is padding on the right)


def encode_all(loaded: LoadedModel, texts: Sequence[str], pairs: Sequence[str | None] | None = None,
               control: TaskControl | None = None, *, max_length: int | None = None, offsets: bool = False,
               special_tokens: bool = False) -> Encoded:
    """Tokenize every row once (with its pair where given), truncated to `max_length` (the model's
    own by default), in chunks with a cancel check and progress between them. A pair may be None
    for some rows only ("" is an empty second sequence, as the tokenizer reads it). Rows that did not
    fit are recorded in `cut`."""
    control = control or TaskControl()
    tokenizer = loaded.tokenizer
    limit = int(max_length or loaded.info.max_length)
    types = "token_type_ids" in tokenizer.model_input_names
    options: dict[str, Any] = {"truncation": True, "max_length": limit, "return_attention_mask": False,
                               "return_token_type_ids": types, "return_special_tokens_mask": special_tokens,
                               "return_offsets_mapping": offsets}
    keys = [k for k, wanted in (("special_tokens_mask", special_tokens), ("offset_mapping", offsets)) if wanted]
    ids: list[list[int]] = [[] for _ in texts]
    type_ids: list[list[int]] = [[] for _ in texts] if types else []
    extras: dict[str, list[Any]] = {k: [None] * len(texts) for k in keys}
    with loaded.lock:  # fast tokenizers are not thread-safe
        for start in range(0, len(texts), CHUNK):
            control.check()
            if len(texts) > CHUNK:
                control.report(f"Tokenized {start:,} of {len(texts):,} rows", start / len(texts))
            stop = min(start + CHUNK, len(texts))
            for part, seconds in _by_pairing(range(start, stop), pairs):
                found = tokenizer([texts[i] for i in part], seconds, **options)
                for n, i in enumerate(part):
                    ids[i] = found["input_ids"][n]
                    if types:
                        type_ids[i] = found["token_type_ids"][n]
                    for key in keys:
                        extras[key][i] = found[key][n]
        cut = _cut_rows(loaded, texts, pairs, ids, limit, control)
    return Encoded(ids, type_ids if types else None, cut, limit, extras)


def _by_pairing(rows: range, pairs: Sequence[str | None] | None) -> Iterator[tuple[list[int], list[str] | None]]:
    """The rows of a chunk in two tokenizer calls at most: those without a pair and those with one."""
    if pairs is None:
        yield list(rows), None
        return
    single = [i for i in rows if pairs[i] is None]
    paired = [i for i in rows if pairs[i] is not None]
    if single:
        yield single, None
    if paired:
        yield paired, [str(pairs[i]) for i in paired]


def _cut_rows(loaded: LoadedModel, texts: Sequence[str], pairs: Sequence[str | None] | None,
              ids: list[list[int]], limit: int, control: TaskControl) -> tuple[int, ...]:
    """Rows that were cut: only a row at the limit exactly may have been, so only those are tokenized again."""
    at_limit = [i for i, row in enumerate(ids) if len(row) >= limit]
    cut = []
    for start in range(0, len(at_limit), CHUNK):
        control.check()
        part = at_limit[start:start + CHUNK]
        for group, seconds in _by_pairing(range(len(part)), [pairs[part[k]] for k in range(len(part))]
                                          if pairs is not None else None):
            full = loaded.tokenizer([texts[part[k]] for k in group], seconds, truncation=False,
                                    return_attention_mask=False, return_token_type_ids=False)["input_ids"]
            cut += [part[k] for k, row in zip(group, full, strict=True) if len(row) > limit]
    return tuple(sorted(cut))


def batches(encoded: Encoded, token_budget: int = CPU_TOKEN_BUDGET, max_rows: int = MAX_ROWS,
            multiple: int = 1) -> list[np.ndarray]:
    """Row groups, longest rows first, each at most `max_rows` rows and `token_budget` padded tokens
    (rows x its padded width; a row longer than the budget goes alone)."""
    import numpy as np

    lengths = encoded.lengths
    order = np.argsort(-lengths, kind="stable")
    groups: list[np.ndarray] = []
    start = 0
    while start < len(order):
        width = max(padded_width(int(lengths[order[start]]), multiple, encoded.max_length), 1)
        size = max(1, min(max_rows, token_budget // width, len(order) - start))
        groups.append(order[start:start + size])
        start += size
    return groups


def token_budget(loaded: LoadedModel) -> int:
    return GPU_TOKEN_BUDGET if loaded.model.device.type == "cuda" else CPU_TOKEN_BUDGET


def width_multiple(loaded: LoadedModel) -> int:
    return GPU_WIDTH_MULTIPLE if loaded.model.device.type == "cuda" else 1


def padded_width(longest: int, multiple: int, max_length: int) -> int:
    """`longest` rounded up to `multiple`, but never past the model's length (or below `longest`)."""
    rounded = -(-longest // multiple) * multiple
    return max(longest, min(rounded, max_length)) if max_length else rounded


def padded(loaded: LoadedModel, encoded: Encoded, rows: np.ndarray, multiple: int = 1) -> dict[str, np.ndarray]:
    """The rows' model inputs padded on the right to the longest of them, rounded up to `multiple`
    (BERT-family absolute positions: the real tokens keep positions 0..n-1, as unpadded)."""
    import numpy as np

    tokenizer = loaded.tokenizer
    width = padded_width(max(len(encoded.input_ids[i]) for i in rows), multiple, encoded.max_length)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    ids = np.full((len(rows), width), pad, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    types = np.full((len(rows), width), tokenizer.pad_token_type_id, dtype=np.int64) \
        if encoded.token_type_ids is not None else None
    for k, i in enumerate(rows):
        row = encoded.input_ids[i]
        ids[k, :len(row)] = row
        mask[k, :len(row)] = 1
        if types is not None and encoded.token_type_ids is not None:
            types[k, :len(row)] = encoded.token_type_ids[i]
    out = {"input_ids": ids, "attention_mask": mask}
    if types is not None:
        out["token_type_ids"] = types
    return out


def _to_device(arrays: dict[str, np.ndarray], device: Any) -> dict[str, Any]:
    """Tensors on `device`; on CUDA from pinned memory without waiting, so the copy overlaps compute."""
    import torch

    tensors = {k: torch.from_numpy(v) for k, v in arrays.items()}
    if device.type != "cuda":
        return tensors
    return {k: t.pin_memory().to(device, non_blocking=True) for k, t in tensors.items()}


def to_host(value: Any, wait: bool = True) -> Any:
    """Tensors (alone, in a tuple or list) as numpy on the CPU; half precision widened to float32 (on the
    device). `wait=False`: CUDA tensors start their copy to pinned host memory and are returned as CPU
    tensors, to be read by `to_host` after one synchronize (no per-batch stall: the GPU keeps its queue)."""
    import torch

    if isinstance(value, torch.Tensor):
        value = value.detach()
        wide = value.float() if value.is_floating_point() and value.element_size() < 4 else value
        return wide.cpu().numpy() if wait else wide.to("cpu", non_blocking=True)
    if isinstance(value, tuple | list):
        return type(value)(to_host(v, wait) for v in value)
    return value


def split_rows(batch: Batch, value: Any) -> list[Any]:
    """Per row of the batch: value[k] (an array), or a tuple of value[j][k] (a tuple of arrays)."""
    if isinstance(value, tuple):
        return list(zip(*value, strict=True))
    return list(value)


@contextmanager
def attention_for(model: Any, weights: bool | None) -> Iterator[None]:
    """The model with sdpa for the duration (eager where `weights`: sdpa returns no attention weights),
    where it supports switching (`weights=None`: never); set back afterwards. The caller holds the lock."""
    config = getattr(model, "config", None)
    current = getattr(config, "_attn_implementation", None)
    wanted = "eager" if weights else "sdpa"
    switch = (weights is not None and current in {"eager", "sdpa"} and current != wanted
              and getattr(model, "_supports_sdpa", False) and hasattr(model, "set_attn_implementation")
              and model._can_set_attn_implementation())
    if not switch:
        yield
        return
    model.set_attn_implementation(wanted)
    try:
        yield
    finally:
        model.set_attn_implementation(current)


def run(loaded: LoadedModel, encoded: Encoded, forward: Callable[[Batch], Any], control: TaskControl | None = None,
        *, budget: int | None = None, max_rows: int | None = MAX_ROWS, weights: bool | None = False,
        verb: str = "Scored", unit: str = "rows", progress: bool = True, bucket: bool = False,
        rows_of: Callable[[Batch, Any], Sequence[Any]] = split_rows) -> list[Any]:
    """`forward` over every row in batches under `budget` padded tokens and `max_rows` rows (None:
    MAX_ROWS); one result per row, in input order (`rows_of(batch, host values)` splits a batch's values,
    by default row k of each array; it reads the batch's rows and lengths, not its inputs, which on CUDA
    are freed before it runs). Cancel is checked and progress reported ("Scored 320 of 4,096 rows") once
    per batch; `progress=False` where the caller reports its own (a search scoring many small sets).
    `bucket=True`: on CUDA, widths rounded up to GPU_WIDTH_MULTIPLE, for forwards whose results do not
    depend on the padded width (one vector per row, the attention mask honoured)."""
    import torch

    control = control or TaskControl()
    multiple = width_multiple(loaded) if bucket else 1
    groups = batches(encoded, budget or token_budget(loaded), max_rows or MAX_ROWS, multiple)
    results: list[Any] = [None] * len(encoded)
    pending: deque[tuple[Batch, Any, Any]] = deque()  # CUDA: (batch, its host copy, the copy's event)
    total, done = len(encoded), 0
    model, lengths = loaded.model, encoded.lengths
    with loaded.lock, torch.inference_mode(), attention_for(model, weights):
        device = model.device
        ahead = _to_device(padded(loaded, encoded, groups[0], multiple), device) if groups else {}
        for n, rows in enumerate(groups):
            control.check()
            batch = Batch(rows, ahead, lengths[rows])
            out = forward(batch)  # on a GPU: queued; the next batch is padded and sent meanwhile
            if n + 1 < len(groups):
                ahead = _to_device(padded(loaded, encoded, groups[n + 1], multiple), device)
            if device.type == "cuda":  # its inputs freed; its results read once IN_FLIGHT newer are queued
                copied = to_host(out, wait=False)
                pending.append((replace(batch, inputs={}), copied, torch.cuda.current_stream(device).record_event()))
                while len(pending) > IN_FLIGHT:
                    _arrived(results, pending.popleft(), rows_of)
            else:
                _place(results, batch, rows_of(batch, to_host(out)))
            done += len(rows)
            if progress:
                control.report(f"{verb} {done:,} of {total:,} {unit}", done / total)
    while pending:
        _arrived(results, pending.popleft(), rows_of)
    control.check()
    return results


def _arrived(results: list[Any], item: tuple[Batch, Any, Any], rows_of: Callable[[Batch, Any], Sequence[Any]]) -> None:
    """A CUDA batch's results placed once its copy to the host is done (that copy, not the device's queue)."""
    batch, copied, event = item
    event.synchronize()
    _place(results, batch, rows_of(batch, to_host(copied)))


def _place(results: list[Any], batch: Batch, values: Sequence[Any]) -> None:
    for i, value in zip(batch.rows.tolist(), values, strict=True):
        results[i] = value


# -- single inputs (one forward each) -----------------------------------------------------------
@contextmanager
def exclusive(loaded: LoadedModel, *, grad: bool = False) -> Iterator[Any]:
    """The loaded model for this job alone, with autograd off; yields the model. Re-entrant (the lock
    is an RLock), so a task may hold it across preprocess and forward and call helpers that take it.
    `grad=True`: autograd on, for code that differentiates through the model (captum, head gates)."""
    import torch

    with loaded.lock, torch.inference_mode(not grad), torch.enable_grad() if grad else nullcontext():
        yield loaded.model


def on_device(model: Any, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Encoded inputs (tensors, or numpy arrays of windows) as tensors on the model's device."""
    import torch

    device = model.device
    return {name: torch.as_tensor(value).to(device) for name, value in inputs.items()}


def forward(model: Any, inputs: Mapping[str, Any], **kwargs: Any) -> Any:
    """The model's output on `inputs`, moved to its device, under inference mode. The caller holds
    `exclusive(loaded)` where the model is shared (every task does)."""
    import torch

    with torch.inference_mode():
        return model(**on_device(model, inputs), **kwargs)


def run_pipeline(loaded: LoadedModel, task: str, *args: Any, **kwargs: Any) -> Any:
    """transformers' pipeline for `task` on this model, called under the lock (the pipeline holds its
    own inference context and moves its inputs itself)."""
    with exclusive(loaded):
        return loaded.pipeline(task)(*args, **kwargs)


def logits(batch: Batch, model: Any) -> Any:
    """The common `forward`: the model's logits on the batch."""
    return model(**batch.inputs).logits


def run_logits(loaded: LoadedModel, encoded: Encoded, control: TaskControl | None = None, **options: Any) -> np.ndarray:
    """(rows, ...) float32 logits in input order."""
    import numpy as np

    model = loaded.model
    found = run(loaded, encoded, lambda batch: logits(batch, model), control, **{"bucket": True, **options})
    return np.stack(found) if found else np.zeros((0, 0), dtype=np.float32)


def cut_note(loaded: LoadedModel, encoded: Encoded, lines: Sequence[int] | None = None) -> list[str]:
    """'3 row(s) were longer than the 512 tokens the model reads and were cut (lines 4, 9, 12).'"""
    if not encoded.cut:
        return []
    where = ""
    if lines is not None:
        named = ", ".join(str(lines[i]) for i in encoded.cut[:10]) + ("…" if len(encoded.cut) > 10 else "")
        where = f" (lines {named})"
    return [f"{len(encoded.cut)} row(s) were longer than the {encoded.max_length} tokens the model reads and "
            f"were cut{where}."]


# -- pre-built rows (explain, patching, features) ------------------------------------------------
def rows(ids: Sequence[Sequence[int]]) -> Encoded:
    """Token id rows the caller built (perturbed or shortened copies of one input, flattened) for `run`;
    a forward may read its own inputs by `batch.rows`."""
    found = [list(row) for row in ids]
    return Encoded(found, None, (), max((len(row) for row in found), default=0))


# -- whole jobs ----------------------------------------------------------------------------------
@contextmanager
def holding(loaded: LoadedModel) -> Iterator[Any]:
    """The model lock for a job of several steps (a search, an export, heads switched off for a run):
    no other job runs on the model between them. Inference mode is left to each step's forward."""
    with loaded.lock:
        yield loaded.model
