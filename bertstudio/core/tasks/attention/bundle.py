"""What the attention tab draws, computed off the GUI thread: pooled grid cells, head means,
rollout and statistics, and the job that makes them (forward pass, grid stage, model B).

Pure numpy and core: the widgets only draw what is here, and the tests check it headless.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from bertstudio.core import notes as _notes
from bertstudio.core.notes import Note

if TYPE_CHECKING:
    from bertstudio.core.heads import HeadSet
    from bertstudio.core.models import LoadRequest
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.attention import AttentionComparison, AttentionInput, AttentionResult
    from bertstudio.core.tasks.attention.state import ViewSettings
    from bertstudio.core.tasks.attention.view import HeadStatistics, View, ViewOptions
    from bertstudio.core.tasks.spec import TaskSpec

CELL_MAX = 128  # a grid cell never needs more pixels a side than this
GAP_INDEX = 255  # the mosaic is uint8 colour indices 0..254; 255 is the gap between cells


# -- pooling: long inputs shrink to the cell's pixel size ------------------------------------------
def _max_pool_axis(stack: np.ndarray, axis: int, factor: int) -> np.ndarray:
    """Max over consecutive groups of `factor` along axis -1 or -2, as `factor` elementwise maxima.

    numpy's max over a short trailing axis runs a tiny inner loop per output value (seconds at
    512 tokens); a few whole-array np.maximum calls over strided views are ~10x faster.
    """
    size = stack.shape[axis]
    pad = (-size) % factor
    if pad:
        widths = [(0, 0)] * stack.ndim
        widths[axis] = (0, pad)
        stack = np.pad(stack, widths)
    if axis == -1:
        groups = stack.reshape(*stack.shape[:-1], stack.shape[-1] // factor, factor)
        out = groups[..., 0].copy()
        for i in range(1, factor):
            np.maximum(out, groups[..., i], out=out)
    else:
        groups = stack.reshape(*stack.shape[:-2], stack.shape[-2] // factor, factor, stack.shape[-1])
        out = groups[..., 0, :].copy()
        for i in range(1, factor):
            np.maximum(out, groups[..., i, :], out=out)
    return out


def pooled(stack: np.ndarray, cell_max: int = CELL_MAX) -> np.ndarray:
    """(..., R, K) max-pooled so neither side exceeds cell_max (max keeps sharp diagonals visible)."""
    rows, cols = stack.shape[-2:]
    fr, fc = max(1, math.ceil(rows / cell_max)), max(1, math.ceil(cols / cell_max))
    if fr > 1:
        stack = _max_pool_axis(stack, -2, fr)
    if fc > 1:
        stack = _max_pool_axis(stack, -1, fc)
    return stack


def with_mean_column(cells: np.ndarray) -> np.ndarray:
    """layers x heads x r x k -> layers x (heads + 1) x r x k, the mean of the heads' cells last.

    Without pooling this is exactly the layer mean; with pooling it is the mean of the
    max-pooled cells (a thumbnail), which is ~16x cheaper than pooling the full-size mean.
    """
    layers, heads, r, k = cells.shape
    out = np.empty((layers, heads + 1, r, k), dtype=np.float32)
    out[:, :heads] = cells
    np.add.reduce(cells, axis=1, out=out[:, heads])
    out[:, heads] *= 1.0 / heads
    return out


def mosaic_indices(stack: np.ndarray, gap: int) -> np.ndarray:
    """layers x columns x r x k -> one uint8 image of colour indices (0..254, each cell scaled to
    its own maximum), GAP_INDEX between cells. One vectorised pass, no float image."""
    layers, columns, r, k = stack.shape
    tops = stack.reshape(layers, columns, -1).max(axis=-1)
    scale = np.divide(254.0, tops, out=np.zeros_like(tops, dtype=np.float32), where=tops > 0)
    out = np.full((layers, r + gap, columns, k + gap), GAP_INDEX, dtype=np.uint8)
    scaled = stack.transpose(0, 2, 1, 3) * scale[:, None, :, None]
    scaled += 0.5
    np.copyto(out[:, :r, :, :k], scaled, casting="unsafe")
    out = out.reshape(layers * (r + gap), columns * (k + gap))
    return out[: out.shape[0] - gap, : out.shape[1] - gap]


def mosaic(stack: np.ndarray, gap: int) -> np.ndarray:
    """Float version (0..1, NaN gaps), for callers who want values rather than colour indices."""
    image = mosaic_indices(stack, gap).astype(np.float32)
    image[image == GAP_INDEX] = np.nan
    return image / 254.0


# -- what the worker hands the tab -----------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class GridStage:
    """Sent as a progress payload as soon as the forward pass is done: enough to draw the grid."""

    result: AttentionResult
    thumbnails: np.ndarray  # layers x (heads + 1) x r x k: max-pooled head cells, the mean of them last
    norm_thumbnails: np.ndarray | None = None  # the same of the value-weighted norms, their sum over heads last


@dataclass(frozen=True, eq=False)
class AttentionBundle:
    """The result plus aggregates computed off the GUI thread.

    Between the grid stage and the end of the job the tab holds a bundle whose mean, rollout
    and statistics are None; the detail view then computes the little it needs itself.
    """

    result: AttentionResult
    mean: np.ndarray | None  # layers x T x T
    rollout: np.ndarray | None  # layers x T x T
    statistics: HeadStatistics | None
    thumbnails: np.ndarray  # layers x (heads + 1) x r x k: the model view's max-pooled cells, mean last
    comparison: AttentionComparison | None = None  # model B and B - A per head, when comparing
    notes: tuple[Note, ...] = ()  # load warnings, truncation, why B cannot be compared
    norm_thumbnails: np.ndarray | None = None  # layers x (heads + 1) x r x k of the norms, summed norm last
    norm_mean_abs: np.ndarray | None = None  # compare: mean |B - A| of the norms per head (layers x heads)

    def layer_mean(self, layer: int) -> np.ndarray:
        return self.mean[layer] if self.mean is not None else self.result.attentions[layer].mean(axis=0)


def grid_stage(result: AttentionResult, cell_max: int = CELL_MAX) -> GridStage:
    """The mosaic's cells straight from the raw attentions: one pooling pass; with norms, the
    norms (per head and summed, computed here, in the worker, and kept on the result) too."""
    norm_thumbnails = None
    if result.norms is not None and result.summed_norms is not None:
        norm_thumbnails = with_extra_column(pooled(result.norms, cell_max), pooled(result.summed_norms, cell_max))
    return GridStage(result, with_mean_column(pooled(result.attentions, cell_max)), norm_thumbnails)


def with_extra_column(cells: np.ndarray, extra: np.ndarray) -> np.ndarray:
    """layers x heads x r x k and layers x r x k -> layers x (heads + 1) x r x k (the summed norm last)."""
    return np.concatenate([cells, extra[:, None]], axis=1).astype(np.float32, copy=False)


def make_bundle(
    result: AttentionResult,
    cell_max: int = CELL_MAX,
    stage: GridStage | None = None,
    comparison: AttentionComparison | None = None,
    control: TaskControl | None = None,
    notes: tuple[Note, ...] = (),
) -> AttentionBundle:
    """Aggregates and grid thumbnails, computed in the worker so the GUI thread only draws."""
    from bertstudio.core.tasks.attention.view import head_statistics, mean_over_heads, rollout

    stage = stage or grid_stage(result, cell_max)
    if control is not None:
        control.check()
    mean = mean_over_heads(result.attentions)
    if control is not None:
        control.check()
    rolled = rollout(result.attentions, mean)
    if control is not None:
        control.check()
    norm_mean_abs = None
    if comparison is not None and comparison.diff is not None and result.norms is not None \
            and comparison.result.norms is not None:
        norm_mean_abs = np.abs(comparison.result.norms - result.norms).mean(axis=(-2, -1)).astype(np.float32)
    return AttentionBundle(result, mean, rolled, head_statistics(result), stage.thumbnails, comparison, notes,
                           stage.norm_thumbnails, norm_mean_abs)


def attention_job(
    spec: TaskSpec,
    request: LoadRequest,
    inputs: AttentionInput,
    compare_source: str | None = None,
    ablated: HeadSet = (),
    control: TaskControl | None = None,
    cell_max: int = CELL_MAX,
) -> AttentionBundle:
    """The template tab's job (task_job's signature): model A through the spec, the grid as a
    progress payload, then B (a second model, or A with `ablated` heads off), then statistics.

    Model A runs alone first so the grid is drawn before model B is even loaded."""
    from bertstudio.core.jobs import run_spec
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.attention import AttentionComparison, attention_differences

    control = control or TaskControl()
    first = run_spec(spec, request, inputs, control)
    result = first.result
    control.check()
    stage = grid_stage(result, cell_max)
    control.report("Attention ready; computing statistics…", None, stage)
    found, comparison = first.notes, None
    if compare_source or ablated:
        label = compare_source or "heads off: " + ", ".join(f"{layer}:{head}" for layer, head in ablated)
        control.report(f"Running {label} to compare…", None)
        other = replace(request, source=compare_source) if compare_source else request
        second = run_spec(spec, other, inputs, control, ablate=() if compare_source else ablated)
        control.check()
        _ = second.result.norms, second.result.summed_norms  # computed here, in the worker, not when drawn
        differences = attention_differences(result, second.result)
        comparison = AttentionComparison(label, second.result, differences.diff, differences.message)
        found += tuple(n.prefixed("B: ") for n in second.notes) + differences.notes
    return make_bundle(result, cell_max, stage, comparison, control, _notes.unique(found))


# -- what the views show, from the bundle and the view settings -----------------------------------
def shown(result: AttentionResult, options: ViewOptions) -> tuple[list[str], list[str], View]:
    """Query tokens, key tokens and the View (rows/columns of the full matrix) the options leave."""
    from bertstudio.core.tasks.attention.view import make_view

    view = make_view(result, options)
    tokens = np.array(result.tokens, dtype=object)
    return list(tokens[view.rows]), list(tokens[view.cols]), view


def is_identity(view: View, length: int) -> bool:
    """The view shows the full matrix untouched (no slicing copy needed)."""
    return len(view.rows) == len(view.cols) == length and not view.renormalise


def detail_matrix(bundle: AttentionBundle, settings: ViewSettings) -> tuple[np.ndarray, list[str], list[str], str]:
    """The detail view's matrix (one head, the layer mean or rollout) after the view options,
    with its labels and title. Rollout asked for before the worker finished is computed here."""
    from bertstudio.core.tasks.attention.view import rollout

    result, layer = bundle.result, settings.layer
    norms = settings.norms and result.norms is not None and result.summed_norms is not None
    if settings.source == "head":
        full, title = result.attentions[layer, settings.head], f"layer {layer}, head {settings.head}"
        if norms:
            full, title = result.norms[layer, settings.head], title + ", value-weighted norms"  # type: ignore[index]
    elif settings.source == "layer mean":
        full, title = bundle.layer_mean(layer), f"layer {layer}, mean over heads"
        if norms:
            full, title = result.summed_norms[layer], f"layer {layer}, norm of the heads' sum"  # type: ignore[index]
    else:
        rolled = bundle.rollout if bundle.rollout is not None else rollout(result.attentions)
        full, title = rolled[layer], f"rollout up to layer {layer}" + (" (of the weights)" if norms else "")
        norms = False
    queries, keys, view = shown(result, settings.options(result.b_start is not None))
    if norms:  # a norm is a size, not a share: hidden tokens are left out, rows are not rescaled
        view = replace(view, renormalise=False)
    return (full if is_identity(view, result.length) else view.apply(full)), queries, keys, title


def shown_heads(result: AttentionResult, settings: ViewSettings) -> tuple[np.ndarray, View, bool]:
    """layers x heads x T x T of what the views show (weights, or norms when chosen and computed),
    the View over it, and whether it is norms (then rows are never renormalised)."""
    _queries, _keys, view = shown(result, settings.options(result.b_start is not None))
    if settings.norms and result.norms is not None:
        return result.norms, replace(view, renormalise=False), True
    return result.attentions, view, False


def grid_cells(bundle: AttentionBundle, options: ViewOptions, cell_max: int, norms: bool = False) -> np.ndarray:
    """The model view's cells for these options: the worker's thumbnails when nothing is hidden.

    `norms`: the value-weighted norms, their sum over heads in the last column (when computed)."""
    result = bundle.result
    _queries, _keys, view = shown(result, options)
    if norms and bundle.norm_thumbnails is not None and result.norms is not None and result.summed_norms is not None:
        if len(view.rows) == len(view.cols) == result.length:
            return bundle.norm_thumbnails
        view = replace(view, renormalise=False)
        return with_extra_column(pooled(view.apply(result.norms), cell_max),
                                 pooled(view.apply(result.summed_norms), cell_max))
    if is_identity(view, result.length):
        return bundle.thumbnails
    return with_mean_column(pooled(view.apply(result.attentions), cell_max))


LINE_BINS = (0.02, 0.05, 0.1, 0.2, 0.4, 1.01)  # weight bin edges of the head view; weaker lines are not drawn
LINE_BUDGET = 6_000  # lines drawn at once: a paint stays well under 50 ms; the strongest are kept


@dataclass(frozen=True, eq=False)
class Lines:
    """One head's candidate lines: query row, key column and weight, for weights >= LINE_BINS[0]."""

    head: int
    q: np.ndarray
    k: np.ndarray
    w: np.ndarray

    @classmethod
    def of(cls, head: int, matrix: np.ndarray) -> Lines:
        flat = matrix.ravel()
        index = np.flatnonzero(flat >= LINE_BINS[0])  # ~2x faster than a 2-D nonzero
        q, k = np.divmod(index, matrix.shape[1])
        return cls(head, q, k, flat[index])

    def take(self, chosen: np.ndarray) -> Lines:
        return Lines(self.head, self.q[chosen], self.k[chosen], self.w[chosen])


def lines_in_view(heads: list[Lines], low: float, high: float, budget: int = LINE_BUDGET) -> tuple[list[Lines], int]:
    """The lines with an end among rows low..high, at most `budget` of them (the strongest).

    Returns the chosen lines per head and how many there were before the budget cut: at 512
    tokens and 12 heads there are ~50k, a blur that would take the GUI thread 170 ms to paint."""
    near = [h.take(((h.q >= low) & (h.q <= high)) | ((h.k >= low) & (h.k <= high))) for h in heads]
    total = sum(len(h.w) for h in near)
    if total <= budget:
        return near, total
    weights = np.concatenate([h.w for h in near])
    cut = np.partition(weights, total - budget)[total - budget]
    return [h.take(h.w >= cut) for h in near], total


def binned(lines: Lines, bins: tuple[float, ...] = LINE_BINS) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """(upper bin edge, x pairs, y pairs) per weight bin: from query q at x=0 to key k at x=1."""
    out = []
    for low, high in zip(bins[:-1], bins[1:], strict=True):
        chosen = (lines.w >= low) & (lines.w < high)
        count = int(chosen.sum())
        xs = np.tile(np.array([0.0, 1.0]), count)
        ys = np.column_stack([lines.q[chosen], lines.k[chosen]]).ravel().astype(np.float64)
        out.append((high, xs, ys))
    return out
