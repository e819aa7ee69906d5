"""The one engine for every batch of inputs: evaluate, corpus indexing, counterfactual scoring, the
task tabs' batch runs, Explain's perturbed copies and faithfulness, patching's patched copies.

transformers' pipeline pads each fixed-size batch of rows (32) to its longest row, in input order:
on a review-like mix (4-480 words) most of every batch is padding. Here the rows are tokenized once
(core/encoding.py), sorted by length, grouped under a budget of *padded tokens* (not a row count),
padded per batch, run, and put back in input order. The model
lock and `torch.inference_mode()` are taken here for the whole run, and nowhere else: one input's
forward holds `exclusive`, a job of several steps on one model (a search, an export, heads switched
off) holds `holding` (the lock only: its steps take inference mode), a backward pass
`exclusive(loaded, grad=True)` (tests/test_forward_path.py names who holds which).

- `encode_all(loaded, texts, pairs)` -> `Encoded`: token ids per row, no padding, cut rows recorded.
- `encode_run(loaded, texts, pairs, forward)` -> (`Encoded`, results): both, the next chunk of rows
  tokenized on a worker thread while this one runs (the host's tokenizing hidden behind a GPU's forward).
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
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from bertstudio.core import encoding
from bertstudio.core.encoding import Encoded as Encoded
from bertstudio.core.encoding import cut_note as cut_note
from bertstudio.core.encoding import rows as rows
from bertstudio.core.progress import TaskControl

if TYPE_CHECKING:
    import numpy as np

    from bertstudio.core.models import LoadedModel

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


def encode_all(loaded: LoadedModel, texts: Sequence[str], pairs: Sequence[str | None] | None = None,
               control: TaskControl | None = None, **options: Unpack[encoding.EncodeOptions]) -> Encoded:
    """encoding.encode_all under the model lock (fast tokenizers are not thread-safe): every row
    tokenized once, unpadded, cut rows recorded."""
    with loaded.lock:
        return encoding.encode_all(loaded, texts, pairs, control, **options)


@dataclass(frozen=True)
class Batch:
    """One padded batch on the model's device: `rows` are positions in the input order."""

    rows: np.ndarray
    inputs: dict[str, Any]  # input_ids, attention_mask (and token_type_ids) as tensors on the device
    lengths: np.ndarray  # real tokens per row (the rest is padding on the right)


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


class RunOptions(TypedDict, total=False):
    """`run`'s and `encode_run`'s keyword options (see `run`)."""

    budget: int | None
    max_rows: int | None
    weights: bool | None
    verb: str
    unit: str
    progress: bool
    bucket: bool
    rows_of: Callable[[Batch, Any], Sequence[Any]]


def run(loaded: LoadedModel, encoded: Encoded, forward: Callable[[Batch], Any], control: TaskControl | None = None,
        **options: Unpack[RunOptions]) -> list[Any]:
    """`forward` over every row in batches under `budget` padded tokens and `max_rows` rows (None:
    MAX_ROWS); one result per row, in input order (`rows_of(batch, host values)` splits a batch's values,
    by default row k of each array; it reads the batch's rows and lengths, not its inputs, which on CUDA
    are freed before it runs). Cancel is checked and progress reported ("Scored 320 of 4,096 rows") once
    per batch; `progress=False` where the caller reports its own (a search scoring many small sets).
    `bucket=True`: on CUDA, widths rounded up to GPU_WIDTH_MULTIPLE, for forwards whose results do not
    depend on the padded width (one vector per row, the attention mask honoured). `weights`: see
    `attention_for`. The options are `_run`'s."""
    return _run(loaded, [(encoded, None)], len(encoded), forward, control, **options)


def encode_run(loaded: LoadedModel, texts: Sequence[str], pairs: Sequence[str | None] | None,
               forward: Callable[[Batch], Any], control: TaskControl | None = None, *,
               encode: encoding.EncodeOptions | None = None,
               **options: Unpack[RunOptions]) -> tuple[Encoded, list[Any]]:
    """`encode_all` then `run`, overlapped: the next chunk of rows is tokenized on a worker thread while
    this chunk's batches run (encoding.Stream), so on a GPU the host's tokenizing hides behind the forward.
    `encode`: encode_all's keyword options. Batches are formed per chunk (STREAM_CHUNK rows, or `max_rows`
    where more), of rows near one length: longest first by characters, so longest first in tokens only
    nearly. For forwards that read nothing but the batch (no `Encoded` of their own by `batch.rows`), and
    that leave the tokenizer alone: the worker is using it."""
    chunk = max(encoding.STREAM_CHUNK, options.get("max_rows") or 0)
    stream = encoding.Stream(loaded, texts, pairs, control, chunk=chunk, **(encode or {}))
    results = _run(loaded, stream.chunks(), len(stream), forward, control, **options)
    return stream.encoded(), results


def _batches_of(chunks: Iterable[tuple[Encoded, np.ndarray | None]], budget: int, max_rows: int,
                multiple: int) -> Generator[tuple[Encoded, np.ndarray, np.ndarray, np.ndarray], None, None]:
    """(the chunk, rows in it, their positions in the input, their lengths) for each batch of each chunk.
    Closed, it closes `chunks` (a Stream's: its tokenizing worker is joined)."""
    try:
        for chunk, where in chunks:
            lengths = chunk.lengths
            for group in batches(chunk, budget, max_rows, multiple):
                yield chunk, group, group if where is None else where[group], lengths[group]
    finally:
        getattr(chunks, "close", lambda: None)()


def _run(loaded: LoadedModel, chunks: Iterable[tuple[Encoded, np.ndarray | None]], total: int,
         forward: Callable[[Batch], Any], control: TaskControl | None = None, *, budget: int | None = None,
         max_rows: int | None = MAX_ROWS, weights: bool | None = False, verb: str = "Scored", unit: str = "rows",
         progress: bool = True, bucket: bool = False,
         rows_of: Callable[[Batch, Any], Sequence[Any]] = split_rows) -> list[Any]:
    """`run` over the batches of each chunk (`where`: its rows' positions in the input, None: all of it)."""
    import torch

    control = control or TaskControl()
    multiple = width_multiple(loaded) if bucket else 1
    results: list[Any] = [None] * total
    pending: deque[tuple[Batch, Any, Any]] = deque()  # CUDA: (batch, its host copy, the copy's event)
    done, model = 0, loaded.model
    items = _batches_of(chunks, budget or token_budget(loaded), max_rows or MAX_ROWS, multiple)
    with loaded.lock, closing(items), torch.inference_mode(), attention_for(model, weights):
        device = model.device
        item = next(items, None)
        ahead = _to_device(padded(loaded, item[0], item[1], multiple), device) if item else {}
        while item is not None:
            control.check()
            batch = Batch(item[2], ahead, item[3])
            out = forward(batch)  # on a GPU: queued; the next batch is padded and sent meanwhile
            item = next(items, None)
            if item is not None:
                ahead = _to_device(padded(loaded, item[0], item[1], multiple), device)
            if device.type == "cuda":  # its inputs freed; its results read once IN_FLIGHT newer are queued
                copied = to_host(out, wait=False)
                pending.append((replace(batch, inputs={}), copied, torch.cuda.current_stream(device).record_event()))
                while len(pending) > IN_FLIGHT:
                    _arrived(results, pending.popleft(), rows_of)
            else:
                _place(results, batch, rows_of(batch, to_host(out)))
            done += len(batch.rows)
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


def run_logits(loaded: LoadedModel, encoded: Encoded, control: TaskControl | None = None,
               **options: Unpack[RunOptions]) -> np.ndarray:
    """(rows, ...) float32 logits in input order."""
    model = loaded.model
    options.setdefault("bucket", True)
    return _stacked(run(loaded, encoded, lambda batch: logits(batch, model), control, **options))


def _stacked(found: list[Any]) -> np.ndarray:
    import numpy as np

    return np.stack(found) if found else np.zeros((0, 0), dtype=np.float32)


def encode_run_logits(loaded: LoadedModel, texts: Sequence[str], pairs: Sequence[str | None] | None = None,
                      control: TaskControl | None = None, **options: Unpack[RunOptions]) -> tuple[Encoded, np.ndarray]:
    """`run_logits` on texts, tokenized while the batches run (`encode_run`)."""
    model = loaded.model
    options.setdefault("bucket", True)
    encoded, found = encode_run(loaded, texts, pairs, lambda batch: logits(batch, model), control, **options)
    return encoded, _stacked(found)


# -- whole jobs ----------------------------------------------------------------------------------
@contextmanager
def holding(loaded: LoadedModel) -> Iterator[Any]:
    """The model lock for a job of several steps (a search, an export, heads switched off for a run):
    no other job runs on the model between them. Inference mode is left to each step's forward."""
    with loaded.lock:
        yield loaded.model
