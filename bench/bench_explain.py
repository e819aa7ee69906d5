"""Explain: Integrated Gradients vs captum called directly; head ablation vs the plain forward.

Model: the trained MiniLM sentiment head of tests/fixtures/trained_sentiment.py (trained on first
use, cached). IG: 128 tokens, 50 steps; our path (target resolution, F(input) and F(baseline),
progress and cancel checks) against `LayerIntegratedGradients.attribute(...,
return_convergence_delta=True)` on the same forward, baseline and steps. Ablation: one forward
with two heads switched off (hooks added and removed each call) against the same forward intact.
"""

from __future__ import annotations

import sys
from pathlib import Path

from common import MODELS, Row, interleaved

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SENTENCE = "Honestly, the long train ride was a delight from start to finish and I would do it again. "


def rows() -> list[Row]:
    import torch
    from captum.attr import LayerIntegratedGradients

    from bertstudio.core.explain.ablation import heads_switched_off
    from bertstudio.core.explain.attribution import explain
    from bertstudio.core.explain.forward import baseline_ids, forward_of
    from bertstudio.core.explain.targets import prepare
    from bertstudio.core.models import LoadRequest, load_model
    from tests.fixtures.trained_sentiment import trained_sentiment

    loaded = load_model(LoadRequest(str(trained_sentiment(MODELS / "all-minilm-l6-v2")), "classification"))
    tokenizer = loaded.tokenizer
    ids = tokenizer(SENTENCE * 12, add_special_tokens=False)["input_ids"][:126]
    text = tokenizer.decode(ids)
    prepared = prepare(loaded, "classification", (text,))
    assert prepared.inputs["input_ids"].shape[-1] == 128, prepared.inputs["input_ids"].shape
    forward, extra = forward_of(loaded, prepared)
    baseline = baseline_ids(loaded, prepared)
    lig = LayerIntegratedGradients(forward, loaded.model.get_input_embeddings())

    def ours() -> object:
        return explain(loaded, "classification", (text,), "integrated-gradients", steps=50)

    def raw() -> object:
        with torch.enable_grad():
            return lig.attribute(prepared.inputs["input_ids"], baselines=baseline, additional_forward_args=extra,
                                 n_steps=50, return_convergence_delta=True)

    out = []
    mine, theirs = interleaved(ours, raw, repeats=5)
    out.append(Row("explain: IG 128 tokens x 50 steps vs captum LIG", mine, theirs, "MiniLM-L6 sentiment, CPU"))

    encoding = {k: v for k, v in prepared.inputs.items()}

    def ablated() -> object:
        with torch.inference_mode(), heads_switched_off(loaded.model, ((0, 0), (3, 5))):
            return loaded.model(**encoding).logits

    def plain() -> object:
        with torch.inference_mode():
            return loaded.model(**encoding).logits

    mine, theirs = interleaved(ablated, plain, repeats=30)
    out.append(Row("explain: forward with 2 heads off vs intact", mine, theirs, "128 tokens, hooks set per call"))
    return out
