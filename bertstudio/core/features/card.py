"""What the window and `features encode` show of an SAE: each token's active features, one
feature's card (its corpus contexts, histogram and, for a masked LM, the tokens its decoder
direction promotes through the MLM head), and the task's answer with a feature scaled or ablated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from bertstudio.core import notes as _notes
from bertstudio.core.errors import InputError
from bertstudio.core.features import sae as sae_math
from bertstudio.core.features.sae_folder import SaeFolder, check_model
from bertstudio.core.limits import check_count
from bertstudio.core.notes import Note
from bertstudio.core.text_limits import require_text

if TYPE_CHECKING:
    from bertstudio.core.corpus.query import Neighbour
    from bertstudio.core.models import LoadedModel, LoadRequest
    from bertstudio.core.progress import TaskControl

PROMOTED = 10  # tokens listed per feature
MAX_SCALE = 100.0


@dataclass(frozen=True)
class TokenFeatures:
    token: str
    features: tuple[tuple[int, float], ...]  # (feature, value), largest first; only values above 0


@dataclass(frozen=True)
class Encoding:
    """Every token the model reads ([CLS] and [SEP] included) with its active features."""

    layer: int
    tokens: tuple[TokenFeatures, ...]
    notes: tuple[Note, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"tokens": [{"token": t.token, "features": [{"feature": f, "value": round(v, 6)}
                                                            for f, v in t.features]} for t in self.tokens]}


def encode_text(loaded: LoadedModel, found: SaeFolder, text: str, control: TaskControl) -> Encoding:
    from bertstudio.core.features import states

    require_text(text)
    check_model(found, loaded)
    layer = states.check_layer(loaded, found.info.layer)
    read = states.collect(loaded, [text], layer, control)
    codes = sae_math.encode(found.sae, read.states)
    tokens = tuple(TokenFeatures(token, tuple((int(f), float(v)) for f, v in zip(ids, values, strict=True) if v > 0))
                   for token, ids, values in zip(read.tokens, codes.ids.tolist(), codes.values.tolist(), strict=True))
    found_notes = (_notes.warning(f"The text is longer than the {loaded.info.max_length} tokens the model reads; "
                                  "it was cut."),) if read.cut else ()
    return Encoding(layer, tokens, found_notes)


@dataclass(frozen=True)
class FeatureCard:
    feature: int
    frequency: float  # share of the corpus tokens it fires on
    largest: float  # its largest value on the corpus
    histogram: tuple[int, ...]  # counts in equal bins from 0 to `largest`
    contexts: tuple[Neighbour, ...]  # its top-activating corpus tokens, largest first
    promoted: tuple[tuple[str, float], ...]  # (token, logit change) through the MLM head; () without one
    notes: tuple[Note, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"feature": self.feature, "frequency": round(self.frequency, 6), "largest": round(self.largest, 6),
                "histogram": list(self.histogram),
                "contexts": [{"line": n.line, "token_index": n.token_index, "token": n.token,
                              "value": round(n.score, 6), "context": n.context} for n in self.contexts],
                "promoted": [{"token": t, "logit": round(v, 6)} for t, v in self.promoted],
                "notes": [n.text for n in self.notes]}


def check_feature(found: SaeFolder, feature: Any) -> int:
    return check_count(feature, "The feature", 0, found.info.m - 1)


def promoted_tokens(loaded: LoadedModel, found: SaeFolder, feature: int,
                    top: int = PROMOTED) -> tuple[tuple[str, float], ...]:
    """The tokens whose MLM logit rises most when the feature's decoder direction is added to b_dec at
    its largest corpus value: head(b_dec + a W_dec[i]) - head(b_dec) (the final norm first where a
    pre-LN model has one and the layer is not the last, as the per-layer view reads layers)."""
    import torch

    from bertstudio.core import engine
    from bertstudio.core.anatomy.modules import anatomy, masked_lm_head
    from bertstudio.core.features.states import levels

    head = masked_lm_head(loaded.model)
    if head is None:
        return ()
    sae = found.sae
    size = float(found.contexts.largest[feature]) if found.contexts is not None else 1.0
    size = size if size > 0 else 1.0
    model = loaded.model
    final_norm = anatomy(model).final_norm
    with engine.exclusive(loaded):  # the head on two states
        parameter = next(model.parameters())
        base = torch.as_tensor(sae.b_dec, device=parameter.device, dtype=parameter.dtype)
        pushed = base + size * torch.as_tensor(sae.W_dec[feature], device=parameter.device, dtype=parameter.dtype)
        rows = torch.stack([base, pushed])
        if final_norm is not None and found.info.layer < levels(loaded):
            rows = final_norm(rows)
        logits = head(rows).float()
        delta = logits[1] - logits[0]
        values, ids = delta.topk(min(top, delta.shape[-1]))
    names = loaded.tokenizer.convert_ids_to_tokens(ids.tolist())
    return tuple((str(name), float(v)) for name, v in zip(names, values.tolist(), strict=True))


def feature_card(found: SaeFolder, feature: Any, mlm: LoadedModel | None = None) -> FeatureCard:
    """The card of `feature`; `mlm`: the model loaded with its trained masked-LM head, or None."""
    number = check_feature(found, feature)
    found_notes: list[Note] = []
    contexts = found.contexts
    if contexts is None:
        found_notes.append(_notes.info("This SAE folder holds no corpus contexts."))
        frequency, largest = 0.0, 0.0
        histogram: tuple[int, ...] = ()
        top: tuple[Neighbour, ...] = ()
    else:
        frequency, largest = float(contexts.frequency[number]), float(contexts.largest[number])
        histogram, top = tuple(int(c) for c in contexts.histogram[number]), tuple(contexts.top(number))
        if not top:
            found_notes.append(_notes.info(f"Feature {number} fires on no token of the corpus (a dead feature)."))
    promoted = promoted_tokens(mlm, found, number) if mlm is not None else ()
    if mlm is None:
        found_notes.append(_notes.info("No promoted tokens: the model has no trained masked-LM head."))
    return FeatureCard(number, frequency, largest, histogram, top, promoted, tuple(found_notes))


def mlm_for(found: SaeFolder, device: str, control: TaskControl) -> LoadedModel | None:
    """The SAE's model with its masked-LM head, when the checkpoint was trained as a masked LM."""
    from bertstudio.core.evaluate.adapters import checkpoint_task
    from bertstudio.core.explain.inputs import explainable
    from bertstudio.core.models import LoadRequest, load_model

    reads_layers = [spec for spec in explainable() if spec.explain is not None and spec.explain.per_layer is not None]
    if not reads_layers or checkpoint_task(found.info.model) != reads_layers[0].key:
        return None
    loaded = load_model(LoadRequest(found.info.model, reads_layers[0].key, device), control)
    return None if loaded.info.head_warning else loaded


def check_scale(scale: Any) -> float:
    try:
        value = float(scale)
    except (TypeError, ValueError):
        raise InputError(f"The scale must be a number, not {str(scale)[:20]!r}.") from None
    if not (np.isfinite(value) and -MAX_SCALE <= value <= MAX_SCALE):
        raise InputError(f"The scale must be between {-MAX_SCALE:g} and {MAX_SCALE:g} (0 ablates the feature).")
    return value


def intervene(request: LoadRequest, found: SaeFolder, feature: Any, scale: Any, inputs: Any,
              control: TaskControl) -> Any:
    """The task's result on `inputs` intact and with `feature` scaled by `scale` in the forward (0: ablated):
    an Outcome whose second result is the edited one, with the task's own differences."""
    import torch

    from bertstudio.core import engine
    from bertstudio.core.features.edit import editing, feature_change
    from bertstudio.core.jobs import Outcome, model_notes
    from bertstudio.core.models import load_model
    from bertstudio.core.tasks.spec import result_notes, spec_for

    number, factor = check_feature(found, feature), check_scale(scale)
    spec = spec_for(request.task)
    if spec.run is None:
        raise InputError(f"{spec.title} cannot be run on one input.")
    loaded = load_model(request, control)
    check_model(found, loaded)
    own = spec.inputs_for(loaded, inputs) if spec.inputs_for else inputs
    intact = spec.run(loaded, own, control)
    control.check()
    parameter = next(loaded.model.parameters())
    weights = [torch.as_tensor(a, device=parameter.device) for a in
               (found.sae.W_enc, found.sae.b_enc, found.sae.W_dec, found.sae.b_dec)]
    change = feature_change(weights[0], weights[1], weights[2], weights[3], found.sae.k, number, factor)
    with engine.exclusive(loaded) as model, editing(model, found.info.layer, change):
        edited = spec.run(loaded, own, control)
    label = f"feature {number} ×{factor:g}" if factor else f"feature {number} ablated"
    diff = spec.compare(intact, edited) if spec.compare else None
    return Outcome(intact, edited, label, diff, _notes.unique(model_notes(loaded) + result_notes(intact)))
