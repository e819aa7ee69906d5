"""One table of where each encoder family keeps its parts, by module name (no torch, no transformers).

This is the only place in BERT Studio that knows an architecture's module names, the way peft keeps
one table of LoRA targets and TransformerLens one weight converter per architecture. Everything
that reaches inside a model (patching, heads off, head importance, q/k views, value norms, LoRA
targets, per-layer predictions, generated scripts) asks `anatomy.modules` or this table.

Paths are dotted attribute names; `*` walks every child of a ModuleList in order (ALBERT's groups).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Family:
    """Where one family of encoders keeps its parts (paths from the bare encoder, then from a layer)."""

    name: str
    layers: str  # from the bare encoder to the layer modules
    encoder: str  # the module whose forward runs every layer call once ("" = the bare encoder itself)
    output: str  # in a layer: the attention output projection (its input is the heads' values, concatenated)
    query: str = ""  # in a layer: the query/key/value projections ("" where they are fused)
    key: str = ""
    value: str = ""
    qkv: str = ""  # in a layer: one fused projection, queries, keys and values in thirds (ModernBERT)
    feed_forward: tuple[str, ...] = ()  # in a layer
    final_norm: str = ""  # from the bare encoder: a norm after the last layer (pre-LN encoders)
    # the masked-LM head from the task model: alternatives, the first whose first name exists wins;
    # each applies its modules in order ("+embeddings": the module also takes the word embeddings)
    masked_lm: tuple[tuple[str, ...], ...] = (("cls.predictions",), ("lm_head",))
    position_offset: str = ""  # "padding": positions start after the padding id; "2": at 2; "" at 0
    segments: str = "required"  # "required": reads segment ids always; "optional": only if it has rows; "none"
    attention_weights: str = "full"  # "full" T x T; "banded": a window around each token; "sparse": may be none
    scores_are_qk: bool = True  # softmax(q.k / sqrt(d)) is the weight (no relative or rotary terms)

    @property
    def query_value_names(self) -> tuple[str, ...]:
        """The last names of the query and value projections (LoRA's default targets; a fused qkv's own)."""
        paths = (self.qkv,) if self.qkv else (self.query, self.value)
        return tuple(path.rsplit(".", 1)[-1] for path in paths)

    def position_start(self, config: Any) -> int:
        """How many position rows come before the first token's (RoBERTa's start after padding)."""
        if self.position_offset == "padding":
            return int(_get(config, "pad_token_id", 1) or 0) + 1
        return int(self.position_offset or 0)


def _get(config: Any, name: str, default: Any = None) -> Any:
    return config.get(name, default) if isinstance(config, Mapping) else getattr(config, name, default)


_BERT = Family("BERT", layers="encoder.layer.*", encoder="encoder", query="attention.self.query",
               key="attention.self.key", value="attention.self.value", output="attention.output.dense",
               feed_forward=("intermediate", "output"))
_ROBERTA = replace(_BERT, name="RoBERTa", masked_lm=(("lm_head",),), position_offset="padding")

FAMILIES: dict[str, Family] = {
    "bert": _BERT,
    "electra": replace(_BERT, name="ELECTRA", masked_lm=(("generator_predictions", "generator_lm_head"),)),
    "roberta": _ROBERTA,
    "xlm-roberta": replace(_ROBERTA, name="XLM-RoBERTa"),
    "camembert": replace(_ROBERTA, name="CamemBERT"),
    "longformer": replace(_ROBERTA, name="Longformer", attention_weights="banded"),
    "big_bird": replace(_BERT, name="BigBird", attention_weights="sparse"),
    "distilbert": Family(
        "DistilBERT", layers="transformer.layer.*", encoder="transformer", query="attention.q_lin",
        key="attention.k_lin", value="attention.v_lin", output="attention.out_lin", feed_forward=("ffn",),
        masked_lm=(("vocab_transform", "activation", "vocab_layer_norm", "vocab_projector"),), segments="none"),
    "albert": Family(
        "ALBERT", layers="encoder.albert_layer_groups.*.albert_layers.*", encoder="encoder",
        query="attention.query", key="attention.key", value="attention.value", output="attention.dense",
        feed_forward=("ffn", "ffn_output"), masked_lm=(("predictions",),)),
    "deberta-v2": Family(
        "DeBERTa-v2/v3", layers="encoder.layer.*", encoder="encoder", query="attention.self.query_proj",
        key="attention.self.key_proj", value="attention.self.value_proj", output="attention.output.dense",
        feed_forward=("intermediate", "output"),
        masked_lm=(("cls.predictions",), ("lm_predictions.lm_head+embeddings",)), segments="optional",
        scores_are_qk=False),
    "mpnet": Family(
        "MPNet", layers="encoder.layer.*", encoder="encoder", query="attention.attn.q", key="attention.attn.k",
        value="attention.attn.v", output="attention.attn.o", feed_forward=("intermediate", "output"),
        masked_lm=(("lm_head",),), position_offset="2", segments="none", scores_are_qk=False),
    "modernbert": Family(
        "ModernBERT", layers="layers.*", encoder="", qkv="attn.Wqkv", output="attn.Wo", feed_forward=("mlp",),
        final_norm="final_norm", masked_lm=(("head", "decoder"),), segments="none", scores_are_qk=False),
    "eurobert": Family(
        "EuroBERT", layers="layers.*", encoder="", query="self_attn.q_proj", key="self_attn.k_proj",
        value="self_attn.v_proj", output="self_attn.o_proj", feed_forward=("mlp",), final_norm="norm",
        masked_lm=(("lm_head",),), segments="none", scores_are_qk=False),
}


def family_of(config: Any) -> Family | None:
    """The family of a config (transformers' or config.json's dict); None for one not in the table."""
    return FAMILIES.get(str(_get(config, "model_type", "") or ""))


def known_names() -> str:
    """The families, for a message that says which ones work."""
    return ", ".join(f.name for f in FAMILIES.values())


def max_positions(config: Any) -> int | None:
    """Tokens the position embeddings can hold (RoBERTa-style offsets taken off); None if not said."""
    positions = _get(config, "max_position_embeddings")
    if not isinstance(positions, int) or positions <= 0:
        return None
    family = family_of(config)
    return positions - (family.position_start(config) if family else 0)


def segment_rows(config: Any) -> int:
    """Segment-embedding rows a config declares (0 when it has none)."""
    value = _get(config, "type_vocab_size", 0)
    return int(value) if isinstance(value, int) else 0


def reads_segments(config: Any) -> bool:
    """Whether the model reads segment ids at all (it needs two rows to tell sentence A from B)."""
    family = family_of(config)
    if family is not None and family.segments == "none":
        return False
    return segment_rows(config) >= 2


def segments_refusal(config: Any) -> str:
    """Why a config cannot run with segment ids at all ("" when it can, or ignores them)."""
    family = family_of(config)
    rows = segment_rows(config)
    if rows >= 1 or family is None or family.segments != "required":
        return ""
    return f"has no segment embedding (config.json type_vocab_size = {rows}), but a {family.name} model reads one"


def script_sites() -> dict[str, tuple[str, str, str, bool]]:
    """For generated scripts (Copy as Python): model type -> (layer modules, value projection or fused
    qkv, attention output projection, whether the value is the last third of a fused qkv), as literals."""
    return {kind: (f.layers, f.qkv or f.value, f.output, bool(f.qkv)) for kind, f in FAMILIES.items()}


# the walker generated scripts carry to follow those paths (`*`: every child, in order)
SCRIPT_WALK = '''def walk(root, path):
    found = [root]
    for part in path.split("."):
        found = [c for m in found for c in (m.children() if part == "*" else [getattr(m, part)])]
    return found
'''
