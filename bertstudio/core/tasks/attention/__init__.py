"""Attention explorer: the model's real attention probabilities, every layer and head, as numpy.

The forward pass runs with eager attention (sdpa returns no weights in transformers 5) and
`output_attentions=True`; the result is one float32 array of shape layers x heads x T x T
(BertViz's data shape) with the tokenizer's own tokens. Views over it (mean over heads,
rollout, special tokens hidden, A/B quadrants, per-head statistics) live in
`core/attention/view.py`; the tab's pooled thumbnails and view state in
`core/attention/bundle.py` and `core/attention/state.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from bertstudio.core import engine, execution
from bertstudio.core import notes as _notes
from bertstudio.core.errors import InputError, MissingHeadError
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.text_limits import require_text

if TYPE_CHECKING:  # numpy is imported where it is used: every spec is read before the window shows
    import numpy as np

    from bertstudio.core.tasks.attention.qk import HeadVectors


@dataclass(frozen=True)
class AttentionInput:
    text: str  # sentence A
    pair: str | None = None  # sentence B: segment ids are set, quadrants become possible
    qk: bool = False  # also capture every head's queries, keys and values (the neuron view, --qk)
    norms: bool = False  # also capture what value-weighted norms need (--norms): same forward pass
    norm_sum: bool = False  # with norms: also what the norm of the heads' sum needs (the tab's summed view)


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
    notes: tuple[Note, ...] = ()  # what was cut to fit the model, explained
    architecture: str = ""
    vectors: HeadVectors | None = None  # queries, keys, values (layers x heads x T x d) when asked for
    value_norms: np.ndarray | None = None  # ||f_h(x_j)||, layers x heads x T (core/attention/norms.py) when asked for
    value_gram: np.ndarray | None = None  # f_h(x_j) . f_g(x_j), layers x T x heads x heads, when the sum is asked for
    softmax_error: float | None = None  # max |softmax(q.k/sqrt(d)) - weight| when vectors were captured

    @cached_property
    def norms(self) -> np.ndarray | None:
        """||alpha_ij f_h(x_j)|| per head (layers x heads x T x T), computed once per result."""
        from bertstudio.core.tasks.attention.norms import head_norms

        return None if self.value_norms is None else head_norms(self.attentions, self.value_norms)

    @cached_property
    def summed_norms(self) -> np.ndarray | None:
        """||sum_h alpha_ij^h f_h(x_j)|| (layers x T x T), computed once per result."""
        from bertstudio.core.tasks.attention.norms import summed_norms

        return None if self.value_gram is None else summed_norms(self.attentions, self.value_gram)

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
            if self.norms is not None:
                out["norms"] = self.norms[layer, head].tolist()
            if self.vectors is not None:
                from bertstudio.core.tasks.attention.qk import qk_json

                out["qk"] = qk_json(self.vectors, layer, head)
        else:
            out["attentions"] = self.attentions.tolist()
            if self.norms is not None:
                out["norms"] = self.norms.tolist()
        return out


def check_head(result: AttentionResult, layer: int, head: int) -> None:
    if not 0 <= layer < result.layers:
        raise InputError(f"Layer {layer} does not exist: this model has layers 0–{result.layers - 1}.")
    if not 0 <= head < result.heads:
        raise InputError(f"Head {head} does not exist: this model has heads 0–{result.heads - 1}.")


# -- the forward pass ----------------------------------------------------------------------------
def _encode(loaded: LoadedModel, text: str, pair: str | None) -> tuple[Any, str, str | None, tuple[Note, ...]]:
    tokenizer = loaded.tokenizer
    limit = loaded.info.max_length
    if pair is None:
        kept, truncation = execution.fit(loaded, text)
        found = execution.truncation_notes(truncation)
        return tokenizer(kept, return_tensors="pt", return_special_tokens_mask=True), kept, None, found
    full = tokenizer(text, pair, return_special_tokens_mask=True)
    cut = len(full["input_ids"]) > limit
    found = (_notes.warning(
        f"The pair is {len(full['input_ids'])} tokens; the model reads at most {limit}. "
        "Tokens were cut from the end of the longer sentence until it fits."
    ),) if cut else ()
    encoding = tokenizer(
        text, pair, return_tensors="pt", return_special_tokens_mask=True,
        truncation="longest_first" if cut else False, max_length=limit if cut else None,
    )
    return encoding, text, pair, found


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
    loaded: LoadedModel, text: str, pair: str | None = None, control: TaskControl | None = None,
    qk: bool = False, norms: bool = False, norm_sum: bool = False,
) -> AttentionResult:
    """Run the model once with output_attentions=True; return every layer and head as numpy.

    `qk`: forward hooks on the model's own projections also keep every head's queries, keys
    and values; `norms`: they keep the values and W_O for value-weighted norms (same pass);
    `norm_sum`: also the Gram matrices for the norm of the heads' sum."""
    import numpy as np

    control = control or TaskControl()
    require_text(text)
    if pair is not None and not pair.strip():
        pair = None
    _check_weights(loaded)
    control.report("Tokenising…", None)
    encoding, kept, pair, found = _encode(loaded, text, pair)
    special_mask = [bool(s) for s in encoding.pop("special_tokens_mask")[0].tolist()]
    tokenizer, ids = loaded.tokenizer, encoding["input_ids"][0].tolist()
    segments, b_start = _segments(encoding, tokenizer, pair is not None)
    inputs = {k: v for k, v in encoding.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    if "token_type_ids" in inputs and pair is None:
        inputs["token_type_ids"] = inputs["token_type_ids"].new_zeros(inputs["input_ids"].shape)
    control.check()
    control.report("Running the model…", None)
    stacked, extra, windowed = _forward(loaded, inputs, qk, norms, norm_sum)
    control.check()
    found += windowed
    if extra.get("vectors") is not None:
        found += _softmax_check(extra, stacked, inputs)
    control.report("Attention ready", 1.0)
    cls_id = tokenizer.cls_token_id if tokenizer.cls_token_id is not None else tokenizer.bos_token_id
    sep_id = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else tokenizer.eos_token_id
    return AttentionResult(
        text=kept, pair=pair, tokens=tuple(tokenizer.convert_ids_to_tokens(ids)),
        attentions=np.ascontiguousarray(stacked), segment_ids=segments, special=tuple(special_mask),
        cls_index=ids.index(cls_id) if cls_id is not None and cls_id in ids else None,
        sep_indices=tuple(i for i, t in enumerate(ids) if sep_id is not None and t == sep_id), b_start=b_start,
        notes=found, architecture=loaded.info.architecture, **extra,
    )


def _check_weights(loaded: LoadedModel) -> None:
    """Refuse a model that returns no attention weights (sdpa, flash) or whose attention is no T x T map."""
    from bertstudio.core.anatomy.modules import attention_refusal

    model = loaded.model
    implementation = getattr(model.config, "_attn_implementation", None)
    if implementation not in (None, "eager"):
        raise MissingHeadError(
            f"The model was loaded with {implementation} attention, which returns no attention weights.",
            hint="Reload it with eager attention (the attention tab does this itself).",
        )
    refusal = attention_refusal(model)
    if refusal:
        raise MissingHeadError(f"{refusal}.", hint="Choose a model of another architecture for attention weights.")


def _forward(loaded: LoadedModel, inputs: dict[str, Any], qk: bool, norms: bool,
             norm_sum: bool) -> tuple[np.ndarray, dict[str, Any], tuple[Note, ...]]:
    """The one forward pass (with the projection hooks where asked): layers x heads x T x T float32, the
    captures as the result's fields, and a note for windowed attention."""
    from contextlib import nullcontext

    import torch

    from bertstudio.core.anatomy.modules import square_attention
    from bertstudio.core.tasks.attention.qk import capture

    model = loaded.model
    hooks = capture(model, vectors=qk, values=norms) if qk or norms else nullcontext()
    with engine.exclusive(loaded), hooks as seen:
        attentions = engine.forward(model, inputs, output_attentions=True).attentions
        if not attentions:
            raise MissingHeadError(f"{loaded.info.architecture} returned no attention weights.",
                                   hint="Load the model with eager attention.")
        length = int(inputs["input_ids"].shape[-1])
        stacked = torch.stack([square_attention(model, a[0], length) for a in attentions]).to(torch.float32)
        heads = model.config.num_attention_heads
        extra = _captured(seen, len(attentions), heads, qk, norms, norm_sum) if seen is not None else {}
    windowed = () if tuple(attentions[0].shape[-2:]) == (length, length) else (_notes.info(
        f"{model.config.model_type} attends within a window around each token: the weights outside it are "
        "zero by construction, not computed."),)
    return stacked.cpu().numpy(), extra, windowed


def _softmax_check(extra: dict[str, Any], stacked: np.ndarray, inputs: dict[str, Any]) -> tuple[Note, ...]:
    """softmax(q.k/sqrt(d)) against the model's weights (`extra` gets the error); a warning where they differ."""
    from bertstudio.core.tasks.attention.qk import softmax_error

    key_valid = inputs["attention_mask"][0].bool().cpu().numpy() if "attention_mask" in inputs else None
    extra["softmax_error"] = softmax_error(extra["vectors"], stacked, key_valid)
    if extra["softmax_error"] <= 1e-3:
        return ()
    return (_notes.warning(
        f"softmax(q.k/sqrt(d)) differs from the model's attention weights by up to {extra['softmax_error']:.3g}: "
        "this model adds terms to its scores that the neuron view does not show."),)


def _captured(seen: Any, layers: int, heads: int, qk: bool, norms: bool, norm_sum: bool) -> dict[str, Any]:
    """The hooks' captures as the result's fields; one capture per layer, or a clear error."""
    from bertstudio.core.tasks.attention.norms import value_gram, value_norms
    from bertstudio.core.tasks.attention.qk import HeadVectors, split_heads

    if len(seen.value) != layers or (qk and not len(seen.query) == len(seen.key) == layers):
        raise MissingHeadError(f"The projection hooks saw {len(seen.value)} attention calls for {layers} layers.",
                               hint="This model's attention is built differently; queries and keys cannot be read.")
    out: dict[str, Any] = {}
    if qk:
        out["vectors"] = HeadVectors(split_heads(seen.query, heads), split_heads(seen.key, heads),
                                     split_heads(seen.value, heads))
    if norms:
        out["value_norms"] = value_norms(seen.value, seen.output_weight, heads)
        if norm_sum:
            out["value_gram"] = value_gram(seen.value, seen.output_weight, heads)
    return out


# -- comparing two models ---------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class AttentionDifferences:
    """What the spec's compare returns: B - A per head, or None with `message` saying why not.

    `diff` is None when the two tokenizers split the input differently or the models differ
    in layers/heads: then no head-by-head difference exists.
    """

    diff: Any = None  # diff.AttentionDiff (difference: layers x heads x T x T, mean_abs, max_abs)
    message: str = ""

    @property
    def notes(self) -> tuple[Note, ...]:
        return (_notes.warning(self.message),) if self.message else ()

    def to_json(self, layer: int | None = None, head: int | None = None) -> dict[str, Any] | None:
        """The CLI's "differences": summaries, plus one head's B - A when --layer/--head narrow it."""
        if self.diff is None:
            return None
        out: dict[str, Any] = self.diff.to_json()
        if layer is not None and head is not None:
            out.update(layer=layer, head=head, difference=self.diff.difference[layer, head].tolist())
        return out


@dataclass(frozen=True, eq=False)
class AttentionComparison:
    """Model B's attention on the same input as A, and B - A per head when the tokens match."""

    source: str
    result: AttentionResult
    diff: Any = None  # diff.AttentionDiff, or None (see `message`)
    message: str = ""

    @property
    def differences(self) -> AttentionDifferences:
        return AttentionDifferences(self.diff, self.message)

    def to_json(self, layer: int | None = None, head: int | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.source, "result": self.result.to_json(layer, head),
                               "differences": self.differences.to_json(layer, head)}
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


def attention_differences(a: AttentionResult, b: AttentionResult) -> AttentionDifferences:
    """B - A per head (diff.attention_difference, imported here: it holds numpy) when both read the same tokens."""
    from bertstudio.core.tasks.attention.diff import attention_difference

    message = tokenization_mismatch(a, b)
    if message:
        return AttentionDifferences(None, message)
    try:
        return AttentionDifferences(attention_difference(a.attentions, b.attentions), "")
    except InputError as error:  # same tokens, but a different number of layers or heads
        return AttentionDifferences(None, str(error))


def compare_attention(a: AttentionResult, b: AttentionResult, source: str) -> AttentionComparison:
    differences = attention_differences(a, b)
    return AttentionComparison(source, b, differences.diff, differences.message)


def run(loaded: LoadedModel, inputs: AttentionInput, control: TaskControl) -> AttentionResult:
    return compute(loaded, inputs.text, inputs.pair, control, qk=inputs.qk, norms=inputs.norms,
                   norm_sum=inputs.norm_sum)
