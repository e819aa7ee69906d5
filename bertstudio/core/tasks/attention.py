"""Attention explorer: the model's real attention probabilities, every layer and head, as numpy.

The forward pass runs with eager attention (sdpa returns no weights in transformers 5) and
`output_attentions=True`; the result is one float32 array of shape layers x heads x T x T
(BertViz's data shape) with the tokenizer's own tokens. Views over it (mean over heads,
rollout, special tokens hidden, A/B quadrants, per-head statistics) are pure numpy here so
the CLI, the tab and the tests share them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bertstudio.core.errors import InputError, MissingHeadError
from bertstudio.core.models import LoadedModel
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import TaskSpec
from bertstudio.core.text_limits import Truncation, fit_to_model, require_text

QUADRANTS = ("all", "A->A", "A->B", "B->A", "B->B")


@dataclass(frozen=True, eq=False)
class AttentionResult:
    """One input's attentions. `attentions[l, h, q, k]`: how much query token q attends to key k."""

    text: str
    pair: str | None
    tokens: tuple[str, ...]
    attentions: np.ndarray  # float32, layers x heads x T x T; every row sums to 1
    segment_ids: tuple[int, ...]  # 0 for sentence A (with [CLS] and its [SEP]), 1 for sentence B
    special: tuple[bool, ...]  # True where the token is a special token ([CLS], [SEP], <s>...)
    cls_index: int | None  # position of [CLS] / <s>, None if the tokenizer adds none
    sep_indices: tuple[int, ...]  # positions of [SEP] / </s>
    b_start: int | None = None  # first token of sentence B (pairs only)
    truncation: Truncation | None = None
    note: str = ""  # pair truncation, explained
    architecture: str = ""

    @property
    def layers(self) -> int:
        return int(self.attentions.shape[0])

    @property
    def heads(self) -> int:
        return int(self.attentions.shape[1])

    @property
    def length(self) -> int:
        return int(self.attentions.shape[2])

    def head(self, layer: int, head: int) -> np.ndarray:
        """One head's T x T matrix; a clear error for indices the model does not have."""
        check_head(self, layer, head)
        return self.attentions[layer, head]

    def to_json(self, layer: int | None = None, head: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "text": self.text,
            "pair": self.pair,
            "tokens": list(self.tokens),
            "segment_ids": list(self.segment_ids),
            "b_start": self.b_start,
            "layers": self.layers,
            "heads": self.heads,
        }
        if layer is not None or head is not None:
            if layer is None or head is None:
                raise InputError("Give both a layer and a head, or neither.")
            out.update(layer=layer, head=head, attention=self.head(layer, head).tolist())
        else:
            out["attentions"] = self.attentions.tolist()
        return out


def check_head(result: AttentionResult, layer: int, head: int) -> None:
    if not 0 <= layer < result.layers:
        raise InputError(f"Layer {layer} does not exist: this model has layers 0–{result.layers - 1}.")
    if not 0 <= head < result.heads:
        raise InputError(f"Head {head} does not exist: this model has heads 0–{result.heads - 1}.")


# -- the forward pass ----------------------------------------------------------------------------
def _encode(loaded: LoadedModel, text: str, pair: str | None) -> tuple[Any, str, str | None, Truncation | None, str]:
    tokenizer = loaded.tokenizer
    limit = loaded.info.max_length
    if pair is None:
        kept, truncation = fit_to_model(text, tokenizer, limit)
        return tokenizer(kept, return_tensors="pt", return_special_tokens_mask=True), kept, None, truncation, ""
    full = tokenizer(text, pair, return_special_tokens_mask=True)
    note = ""
    if len(full["input_ids"]) > limit:
        note = (
            f"The pair is {len(full['input_ids'])} tokens; the model reads at most {limit}. "
            "Tokens were cut from the end of the longer sentence until it fits."
        )
    encoding = tokenizer(
        text, pair, return_tensors="pt", return_special_tokens_mask=True,
        truncation="longest_first" if note else False, max_length=limit if note else None,
    )
    return encoding, text, pair, None, note


def _segments(encoding: Any, tokenizer: Any, pair: bool) -> tuple[tuple[int, ...], int | None]:
    """Segment ids from the encoding (token_type_ids, or the sequence ids of a fast tokenizer)."""
    length = int(encoding["input_ids"].shape[1])
    if not pair:
        return (0,) * length, None
    sequence_ids = encoding.sequence_ids(0) if getattr(encoding, "is_fast", False) else None
    if sequence_ids is not None:
        segments, current = [], 0
        for sid in sequence_ids:  # specials (None) belong to the sentence they close
            if sid is not None:
                current = sid
            segments.append(current)
        # a special token that opens B (RoBERTa's second </s>) stays with A; B starts at its first word
        b_start = sequence_ids.index(1) if 1 in sequence_ids else None
        if b_start is not None:
            segments = [0 if i < b_start else s for i, s in enumerate(segments)]
        return tuple(segments), b_start
    if "token_type_ids" in encoding:
        types = [int(t) for t in encoding["token_type_ids"][0]]
        if 1 in types:
            return tuple(types), types.index(1)
    raise InputError(f"{type(tokenizer).__name__} cannot tell where sentence B starts.")


def compute(
    loaded: LoadedModel, text: str, pair: str | None = None, control: TaskControl | None = None
) -> AttentionResult:
    """Run the model once with output_attentions=True; return every layer and head as numpy."""
    import torch

    control = control or TaskControl()
    require_text(text)
    if pair is not None and not pair.strip():
        pair = None
    tokenizer = loaded.tokenizer
    model = loaded.model
    implementation = getattr(model.config, "_attn_implementation", None)
    if implementation not in (None, "eager"):
        raise MissingHeadError(
            f"The model was loaded with {implementation} attention, which returns no attention weights.",
            hint="Reload it with eager attention (the attention tab does this itself).",
        )
    control.report("Tokenising…", None)
    encoding, kept, pair, truncation, note = _encode(loaded, text, pair)
    special_mask = [bool(s) for s in encoding.pop("special_tokens_mask")[0].tolist()]
    segments, b_start = _segments(encoding, tokenizer, pair is not None)
    wanted = ("input_ids", "attention_mask", "token_type_ids")
    inputs = {k: v.to(model.device) for k, v in encoding.items() if k in wanted}
    if "token_type_ids" in inputs and pair is None:
        inputs["token_type_ids"] = torch.zeros_like(inputs["input_ids"])
    control.check()
    control.report("Running the model…", None)
    with loaded.lock, torch.inference_mode():
        outputs = model(**inputs, output_attentions=True)
    control.check()
    attentions = outputs.attentions
    if not attentions:
        raise MissingHeadError(
            f"{loaded.info.architecture} returned no attention weights.",
            hint="Load the model with eager attention.",
        )
    stacked = torch.stack([a[0] for a in attentions]).to(torch.float32).cpu().numpy()
    ids = encoding["input_ids"][0].tolist()
    tokens = tuple(tokenizer.convert_ids_to_tokens(ids))
    cls_id = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep_id = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    cls_index = ids.index(cls_id) if cls_id is not None and cls_id in ids else None
    sep_indices = tuple(i for i, t in enumerate(ids) if sep_id is not None and t == sep_id)
    control.report("Attention ready", 1.0)
    return AttentionResult(
        text=kept, pair=pair, tokens=tokens, attentions=np.ascontiguousarray(stacked),
        segment_ids=segments, special=tuple(special_mask), cls_index=cls_index, sep_indices=sep_indices,
        b_start=b_start, truncation=truncation, note=note, architecture=loaded.info.architecture,
    )


# -- aggregates ------------------------------------------------------------------------------------
def mean_over_heads(attentions: np.ndarray) -> np.ndarray:
    """layers x T x T: the average head of each layer."""
    return attentions.mean(axis=1)


def rollout(attentions: np.ndarray, mean: np.ndarray | None = None) -> np.ndarray:
    """Attention rollout (Abnar & Zuidema, 2020), cumulative up to each layer: layers x T x T.

    Each layer's head-averaged attention gets the residual connection added as the identity,
    rows are renormalised ((A + I) / 2 for stochastic rows), and layers are multiplied from the
    bottom: R_0 = Â_0, R_l = Â_l · R_{l-1}. Row q of R_l says how much of token q's layer-l
    representation flows from each input token.
    """
    mean = (mean_over_heads(attentions) if mean is None else mean).astype(np.float64)  # mean: reuse if known
    eye = np.eye(mean.shape[-1])
    out = np.empty_like(mean)
    current = eye
    for layer, matrix in enumerate(mean):
        hat = matrix + eye
        hat /= hat.sum(axis=-1, keepdims=True)
        current = hat @ current
        out[layer] = current
    return out.astype(np.float32)


# -- views: hide special tokens, quadrants -------------------------------------------------------
@dataclass(frozen=True)
class ViewOptions:
    """How a matrix is shown: a plain object the tab binds to and tests can build."""

    hide_special: bool = False
    renormalise: bool = True  # after hiding special tokens, rows sum to 1 again over what is left
    quadrant: str = "all"  # one of QUADRANTS (pairs only): query sentence -> key sentence

    def describe(self) -> str:
        parts = []
        if self.hide_special:
            parts.append("special tokens hidden, rows renormalised" if self.renormalise
                         else "special tokens hidden, not renormalised (rows sum to less than 1)")
        if self.quadrant != "all":
            parts.append(f"quadrant {self.quadrant} (queries in {self.quadrant[0]}, keys in {self.quadrant[-1]})")
        return "; ".join(parts)


@dataclass(frozen=True, eq=False)
class View:
    """Which query rows and key columns of the full matrix are shown."""

    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    cols: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    renormalise: bool = False

    def apply(self, matrices: np.ndarray) -> np.ndarray:
        """Slice (..., T, T) to (..., rows, cols), renormalising rows if asked."""
        out = matrices[..., self.rows[:, None], self.cols[None, :]]
        if self.renormalise:
            sums = out.sum(axis=-1, keepdims=True)
            out = np.divide(out, sums, out=np.zeros_like(out), where=sums > 0)
        return out


def segment_indices(result: AttentionResult, segment: str) -> np.ndarray:
    """Token positions of sentence 'A' or 'B'."""
    if result.b_start is None:
        raise InputError("Quadrants need a sentence pair: give a sentence B.")
    wanted = 0 if segment == "A" else 1
    return np.array([i for i, s in enumerate(result.segment_ids) if s == wanted], dtype=int)


def make_view(result: AttentionResult, options: ViewOptions) -> View:
    if options.quadrant not in QUADRANTS:
        raise InputError(f"Unknown quadrant {options.quadrant!r}; choose one of {', '.join(QUADRANTS)}.")
    every = np.arange(result.length)
    if options.quadrant == "all":
        rows, cols = every, every
    else:
        rows = segment_indices(result, options.quadrant[0])
        cols = segment_indices(result, options.quadrant[-1])
    if options.hide_special:
        keep = ~np.array(result.special, dtype=bool)
        rows, cols = rows[keep[rows]], cols[keep[cols]]
    return View(rows=rows, cols=cols, renormalise=options.hide_special and options.renormalise)


def quadrant(result: AttentionResult, matrix: np.ndarray, name: str) -> np.ndarray:
    """The A->A / A->B / B->A / B->B block of a (..., T, T) matrix (queries -> keys), not renormalised."""
    return make_view(result, ViewOptions(quadrant=name)).apply(matrix)


# -- statistics per head ---------------------------------------------------------------------------
STAT_COLUMNS = ("entropy", "cls", "sep", "previous", "next")
STAT_TITLES = {
    "entropy": "entropy (nats)",
    "cls": "to [CLS]",
    "sep": "to [SEP]",
    "previous": "to previous",
    "next": "to next",
}


@dataclass(frozen=True, eq=False)
class HeadStatistics:
    """One row per head, averaged over query tokens; arrays are layers x heads."""

    entropy: np.ndarray  # mean row entropy in nats (low: focused head, high: broad)
    cls: np.ndarray  # mean share of attention that goes to [CLS]
    sep: np.ndarray  # ... to any [SEP]
    previous: np.ndarray  # ... to the token just before the query
    next: np.ndarray  # ... to the token just after

    def rows(self) -> list[tuple[float, ...]]:
        """(layer, head, *statistics) per head, for the sortable table."""
        layers, heads = self.entropy.shape
        return [
            (layer, head, *(float(getattr(self, c)[layer, head]) for c in STAT_COLUMNS))
            for layer in range(layers) for head in range(heads)
        ]


def head_statistics(result: AttentionResult) -> HeadStatistics:
    """Per-head statistics in float32 with one temporary: 37M values at 512 tokens stay cheap."""
    att = result.attentions
    length = result.length
    # x * log(x) with zeros counting 0: log of max(x, tiny) in one buffer, then a fused multiply-sum
    logs = np.maximum(att, np.finfo(np.float32).tiny)
    np.log(logs, out=logs)
    layers, heads = att.shape[:2]
    flat_a, flat_l = att.reshape(layers * heads, length, length), logs.reshape(layers * heads, length, length)
    entropy = -np.einsum("nqk,nqk->n", flat_a, flat_l).reshape(layers, heads) / max(length, 1)
    del logs
    none = np.zeros(att.shape[:2], dtype=np.float32)
    cls = att[..., result.cls_index].mean(axis=-1) if result.cls_index is not None else none
    sep = att[..., list(result.sep_indices)].sum(axis=-1).mean(axis=-1) if result.sep_indices else none
    if length > 1:
        q = np.arange(1, length)
        previous = att[..., q, q - 1].mean(axis=-1)
        following = att[..., q - 1, q].mean(axis=-1)
    else:
        previous = following = none
    return HeadStatistics(*(np.asarray(a, dtype=np.float32) for a in (entropy, cls, sep, previous, following)))


# -- comparing two models ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class AttentionComparison:
    """Model B's attention on the same input as A, and B - A per head when the tokens match.

    `diff` is None, with `message` saying why, when the two tokenizers split the input
    differently or the models differ in layers/heads: then no head-by-head difference exists.
    """

    source: str
    result: AttentionResult
    diff: Any = None  # core.compare.AttentionDiff (difference: layers x heads x T x T, mean_abs, max_abs)
    message: str = ""

    def to_json(self, layer: int | None = None, head: int | None = None) -> dict[str, Any]:
        differences: dict[str, Any] | None = None
        if self.diff is not None:
            differences = self.diff.to_json()
            if layer is not None and head is not None:
                differences.update(layer=layer, head=head, difference=self.diff.difference[layer, head].tolist())
        out: dict[str, Any] = {"model": self.source, "result": self.result.to_json(layer, head),
                               "differences": differences}
        if self.message:
            out["message"] = self.message
        return out


def tokenization_mismatch(a: AttentionResult, b: AttentionResult) -> str:
    """Why the two results cannot be compared token by token ("" when they can)."""
    if a.tokens == b.tokens:
        return ""
    first = next((i for i, (x, y) in enumerate(zip(a.tokens, b.tokens, strict=False)) if x != y),
                 min(len(a.tokens), len(b.tokens)))
    shown_a = a.tokens[first] if first < len(a.tokens) else "(end)"
    shown_b = b.tokens[first] if first < len(b.tokens) else "(end)"
    return (
        f"The two models split the input differently (A: {len(a.tokens)} tokens, B: {len(b.tokens)} tokens; "
        f"first difference at token {first}: A '{shown_a}', B '{shown_b}'), so their attention cannot be "
        "compared head by head. Compare models that share a tokenizer (e.g. a model and its fine-tuned copy)."
    )


def compare_attention(a: AttentionResult, b: AttentionResult, source: str) -> AttentionComparison:
    """B - A per head (core.compare.attention_difference) when both read the same tokens."""
    from bertstudio.core.compare import attention_difference

    message = tokenization_mismatch(a, b)
    if message:
        return AttentionComparison(source, b, None, message)
    try:
        diff = attention_difference(a.attentions, b.attentions)
    except InputError as error:  # same tokens, but a different number of layers or heads
        return AttentionComparison(source, b, None, str(error))
    return AttentionComparison(source, b, diff, "")


SPEC = TaskSpec(
    key="attention", title="Attention", model_class="AutoModel", default_model="bert-base-uncased",
    attn_implementation="eager", order=50,
)
