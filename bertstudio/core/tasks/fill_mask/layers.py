"""Per-layer predictions: the model's own MLM head read at every layer (a "logit lens" for masks),
fill-mask's own view: its spec names `per_layer` (ExplainAdapter.per_layer), Explain and the CLI ask it.

Post-LN encoders (BERT, RoBERTa, DeBERTa...) hand on layer-normalised states, so the head is applied
to each hidden state exactly as to the last. Pre-LN encoders (ModernBERT, EuroBERT) normalise once,
after the last layer: their earlier states go through that final norm first, as the logit lens
does. The head (from the model's anatomy) keeps its own transform before the decoder. The last
layer equals fill-mask's result.

With a tuned lens (core/features/tuned_lens.py: one affine translator per layer, trained on a
corpus), each state is also translated before the head reads it, side by side with the logit lens;
both carry each layer's KL divergence from the last layer's distribution at every mask.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bertstudio.core import engine
from bertstudio.core.anatomy.modules import anatomy, masked_lm_head
from bertstudio.core.errors import InputError, MissingHeadError
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.tasks.fill_mask import MAX_TOP_K, Candidate, in_mask_of
from bertstudio.core.text_limits import fit_to_model, require_text

if TYPE_CHECKING:
    from bertstudio.core.features.tuned_lens import TunedLens

NOTE = ("Each layer's hidden state is read by the model's own MLM head (its transform and LayerNorm "
        "included); layer 0 is the embedding output.")
TUNED_NOTE = ("Tuned lens: each layer's state goes through its trained affine translator before the head; KL is "
              "each layer's divergence from the last layer's distribution (lower: closer to the answer).")


@dataclass(frozen=True)
class LayerPredictions:
    """Top-k candidates per layer (0 = embeddings, then layer 1..L) and per mask."""

    layers: tuple[tuple[tuple[Candidate, ...], ...], ...]
    tokens: tuple[str, ...]
    masks: tuple[int, ...]  # token positions of the masks
    notes: tuple[Note, ...] = ()
    kl: tuple[tuple[float, ...], ...] = ()  # per layer, per mask: KL(last layer || this layer), logit lens
    tuned: tuple[tuple[tuple[Candidate, ...], ...], ...] = ()  # the same read through a tuned lens; () without
    tuned_kl: tuple[tuple[float, ...], ...] = ()

    def to_json(self) -> list[list[list[dict[str, object]]]]:
        return [[[c.to_json() for c in mask] for mask in layer] for layer in self.layers]

    def lens_json(self) -> dict[str, Any]:
        """The logit lens and the tuned lens side by side, with their KL per layer and mask."""
        return {"logit_lens": self.to_json(), "kl_logit_lens": [list(row) for row in self.kl],
                "tuned_lens": [[[c.to_json() for c in mask] for mask in layer] for layer in self.tuned],
                "kl_tuned_lens": [list(row) for row in self.tuned_kl]}


def mlm_head(model: Any) -> Callable[[Any], Any]:
    """hidden states -> vocabulary logits, with the head the checkpoint was trained with."""
    head = masked_lm_head(model)
    if head is None:
        raise MissingHeadError(f"{type(model).__name__} has no masked-LM head to read the layers with.",
                               hint="Load the model for fill-mask.")
    return head


def per_layer(loaded: LoadedModel, text: str, top_k: int = 5, lens: TunedLens | None = None) -> LayerPredictions:
    """Top-k per layer at every mask; the text is read as fill-mask reads it. `lens`: each layer is also
    read through the tuned lens (a lens for another model is refused)."""
    require_text(text)
    if not 1 <= top_k <= MAX_TOP_K:
        raise InputError(f"top-k must be between 1 and {MAX_TOP_K}, not {top_k}.")
    tokenizer = loaded.tokenizer
    if tokenizer.mask_token is None:
        raise MissingHeadError("This tokenizer has no mask token, so there are no masks to read.")
    text = in_mask_of(loaded, text)
    read, _ = fit_to_model(text, tokenizer, loaded.info.max_length)
    head = mlm_head(loaded.model)
    if lens is not None:
        from bertstudio.core.features.tuned_lens import check_model

        check_model(lens, loaded)
    with engine.exclusive(loaded) as model:  # one text, one forward
        encoding = tokenizer(read, return_tensors="pt").to(model.device)
        masks = (encoding["input_ids"][0] == tokenizer.mask_token_id).nonzero().flatten().tolist()
        if not masks:
            raise InputError(f"The text has no mask token. Put {tokenizer.mask_token} where a word should be.")
        hidden = model(**encoding, output_hidden_states=True).hidden_states
        final_norm = anatomy(model).final_norm

        def log_probs_at(level: int, rows: Any) -> Any:
            if final_norm is not None and level < len(hidden) - 1:  # the last state is normalised already
                rows = final_norm(rows)
            return head(rows).float().log_softmax(-1)

        def candidates(log_probs: Any) -> tuple[tuple[Candidate, ...], ...]:
            values, ids = log_probs.exp().topk(top_k)
            return tuple(
                tuple(Candidate(str(tokenizer.decode([int(i)])), int(i), float(v)) for v, i in zip(row_v, row_i,
                                                                                               strict=True))
                for row_v, row_i in zip(values.cpu(), ids.cpu(), strict=True))

        def kl(log_probs: Any) -> tuple[float, ...]:
            return tuple(float(v) for v in (last.exp() * (last - log_probs)).sum(-1).clamp_min(0).cpu())

        last = log_probs_at(len(hidden) - 1, hidden[-1][0, masks])
        layers, kls, tuned, tuned_kls = [], [], [], []
        for level, state in enumerate(hidden):
            rows = state[0, masks]
            log_probs = log_probs_at(level, rows)
            layers.append(candidates(log_probs))
            kls.append(kl(log_probs))
            if lens is not None:
                translated = log_probs_at(level, lens.translate(level, rows))
                tuned.append(candidates(translated))
                tuned_kls.append(kl(translated))
    tokens = tuple(tokenizer.convert_ids_to_tokens(encoding["input_ids"][0].tolist()))
    from bertstudio.core import notes

    found = (notes.info(NOTE),) + ((notes.info(TUNED_NOTE),) if lens is not None else ())
    return LayerPredictions(tuple(layers), tokens, tuple(masks), found, tuple(kls), tuple(tuned), tuple(tuned_kls))
