"""Occlusion, LIME, Kernel SHAP, the zero baseline and faithfulness, each against an independent reference:
a hand-written loop, captum called directly, and the ERASER definitions computed by hand (float64 models, so
the tiny random checkpoints' small differences are far above rounding)."""

from __future__ import annotations

import math

import pytest

from bertstudio.core.errors import InputError, TaskCancelled
from bertstudio.core.models import LoadRequest, load_uncached
from bertstudio.core.progress import TaskControl

TEXT = ("a good film about a big dog .",)
HEADS = {"classification": "SequenceClassification", "ner": "TokenClassification",
         "multiple-choice": "MultipleChoice", "nsp": "NextSentencePrediction", "fill-mask": "MaskedLM"}


NER_TEXT = ("john lives in paris with a big dog .",)


def _loaded(checkpoint_factory, arch: str, task: str = "classification", sharp: bool = False):  # noqa: ANN001, ANN202
    """A tiny checkpoint in float64; `sharp`: its word embeddings x10 and head x30, so that F moves by tenths
    when tokens go (captum fits LIME / SHAP in float32: differences of 1e-7 would be rounding)."""
    import torch

    loaded = load_uncached(LoadRequest(str(checkpoint_factory(arch, HEADS[task])), task))
    loaded.model.double()
    if sharp:
        with torch.no_grad():
            loaded.model.get_input_embeddings().weight.mul_(10)
            for parameter in loaded.model.classifier.parameters():
                parameter.mul_(30)
    return loaded


def _model_inputs(loaded, prepared) -> dict:  # noqa: ANN001
    """The prepared inputs, and for RoBERTa the input's own position ids (written out, not shared)."""
    inputs = dict(prepared.inputs)
    if loaded.model.config.model_type == "roberta":
        pad = loaded.model.config.pad_token_id
        real = inputs["input_ids"].ne(pad).long()
        inputs["position_ids"] = real.cumsum(-1) * real + pad
    return inputs


def _f(loaded, prepared, **changed) -> float:  # noqa: ANN001
    import torch

    with torch.no_grad():
        return float(prepared.probability(loaded.model(**{**_model_inputs(loaded, prepared), **changed}))[0])


@pytest.mark.parametrize(("arch", "task", "texts"), [("bert", "classification", TEXT),
                                                     ("roberta", "classification", TEXT),
                                                     ("bert", "multiple-choice", ("the cat", "sat .", "ran off ."))])
def test_occlusion_equals_a_hand_written_loop(checkpoint_factory, arch: str, task: str, texts: tuple) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain
    from bertstudio.core.explain.targets import prepare

    loaded = _loaded(checkpoint_factory, arch, task)
    ours = explain(loaded, task, texts, "occlusion")
    prepared = prepare(loaded, task, texts)
    ids = prepared.inputs["input_ids"]
    full = _f(loaded, prepared)
    expected = []
    for flat in prepared.keep:
        if prepared.special[flat]:
            expected.append(0.0)
            continue
        occluded = ids.clone().reshape(-1)
        occluded[flat] = loaded.tokenizer.pad_token_id
        expected.append(full - _f(loaded, prepared, input_ids=occluded.reshape(ids.shape)))
    assert ours.score == pytest.approx(full, abs=1e-12)
    assert list(ours.attributions) == pytest.approx(expected, abs=1e-12)
    assert max(abs(v) for v in expected) > 1e-6  # the tiny model does respond to a missing token


def _captum_direct(loaded, task: str, method: str, samples: int, seed: int):  # noqa: ANN001, ANN202
    """captum's Lime / KernelShap on a forward written here: the non-special ids put back in the sequence."""
    import torch
    from captum._utils.models.linear_model import SkLearnRidge
    from captum.attr import KernelShap, Lime

    from bertstudio.core.explain.perturbation import lime_kernel
    from bertstudio.core.explain.targets import prepare

    prepared = prepare(loaded, task, NER_TEXT)
    ids = prepared.inputs["input_ids"]
    positions = [i for i in prepared.keep if not prepared.special[i]]
    inputs = _model_inputs(loaded, prepared)

    def forward(present: torch.Tensor) -> torch.Tensor:
        full = ids.repeat(present.shape[0], 1)
        full[:, positions] = present
        others = {k: v.repeat(present.shape[0], 1) for k, v in inputs.items() if k != "input_ids"}
        with torch.no_grad():
            return prepared.probability(loaded.model(input_ids=full, **others))

    present = ids[:, positions]
    absent = torch.full_like(present, loaded.tokenizer.pad_token_id)
    explainer = (Lime(forward, interpretable_model=SkLearnRidge(alpha=1.0), similarity_func=lime_kernel)
                 if method == "lime" else KernelShap(forward))
    torch.manual_seed(seed)
    coefficients = explainer.attribute(present, baselines=absent, n_samples=samples)[0].tolist()
    values = dict(zip(positions, coefficients, strict=True))
    return [values.get(i, 0.0) for i in prepared.keep], forward(present)[0] - forward(absent)[0]


@pytest.mark.parametrize("method", ["lime", "kernel-shap"])
def test_lime_and_kernel_shap_equal_captum_with_the_same_seed(checkpoint_factory, method: str) -> None:  # noqa: ANN001
    import torch

    from bertstudio.core.explain.attribution import explain

    loaded = _loaded(checkpoint_factory, "bert", "ner", sharp=True)
    state = torch.get_rng_state()
    ours = explain(loaded, "ner", NER_TEXT, method, samples=48, seed=7)
    assert torch.equal(torch.get_rng_state(), state)  # the caller's generator is left as it was
    expected, gap = _captum_direct(loaded, "ner", method, 48, 7)
    assert ours.samples == 48 and ours.seed == 7 and ours.to_json()["samples"] == 48
    assert list(ours.attributions) == pytest.approx(expected, abs=1e-7)
    assert sorted(abs(v) for v in expected)[-3] > 1e-3  # more than one token matters
    other = explain(loaded, "ner", NER_TEXT, method, samples=48, seed=8)
    assert list(other.attributions) != pytest.approx(expected, abs=1e-7)  # the seed matters
    if method == "kernel-shap":  # efficiency: the attributions add up to F(x) - F(all absent)
        assert abs(float(gap)) > 0.05
        assert sum(ours.attributions) == pytest.approx(float(gap), rel=1e-4)


def test_the_zero_baseline_equals_captum_integrated_gradients_over_embeddings(checkpoint_factory) -> None:  # noqa: ANN001
    import torch
    from captum.attr import IntegratedGradients

    from bertstudio.core.explain.attribution import explain
    from bertstudio.core.explain.targets import prepare

    loaded = _loaded(checkpoint_factory, "roberta")
    ours = explain(loaded, "classification", TEXT, steps=16, baseline="zero")
    prepared = prepare(loaded, "classification", TEXT)
    inputs = _model_inputs(loaded, prepared)
    ids = inputs.pop("input_ids")
    embedded = loaded.model.get_input_embeddings()(ids).detach()
    special = torch.tensor(prepared.special).reshape(ids.shape).unsqueeze(-1).double()

    def forward(embeds: torch.Tensor) -> torch.Tensor:
        batch = embeds.shape[0]
        return prepared.probability(loaded.model(inputs_embeds=embeds, **{k: v.repeat(batch, 1)
                                                                           for k, v in inputs.items()}))

    with torch.enable_grad():
        expected = IntegratedGradients(forward).attribute(embedded, baselines=embedded * special, n_steps=16)
    assert ours.baseline == "zero" and ours.to_json()["baseline"] == "zero"
    assert list(ours.attributions) == pytest.approx(expected.sum(-1)[0].tolist(), abs=1e-12)
    with torch.no_grad():
        start = float(forward(embedded * special)[0])
        gap = float(forward(embedded)[0]) - start
    assert sum(ours.attributions) == pytest.approx(gap, abs=1e-6)
    assert ours.baseline_score == pytest.approx(start, abs=1e-12)


def _hand_faithfulness(loaded, tokens: list[int], special: list[bool], values: list[float], read) -> tuple:  # noqa: ANN001
    """ERASER by the definitions, on plain lists of ids: delete the top ceil(k% n), or keep only them."""
    import torch

    counted = [i for i in range(len(tokens)) if not special[i]]
    order = sorted(counted, key=lambda i: (-values[i], i))

    def f(kept: list[int]) -> float:
        ids = torch.tensor([[tokens[i] for i in kept]])
        with torch.no_grad():
            return read(loaded.model(input_ids=ids, attention_mask=torch.ones_like(ids)), kept)

    full = f(list(range(len(tokens))))
    comprehensiveness, sufficiency = [], []
    for k in (1, 5, 10, 20, 50):
        top = set(order[:math.ceil(k * len(counted) / 100)])
        comprehensiveness.append(full - f([i for i in range(len(tokens)) if i not in top]))
        sufficiency.append(full - f([i for i in range(len(tokens)) if special[i] or i in top]))
    return comprehensiveness, sufficiency


def test_faithfulness_equals_the_definitions_by_hand(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    loaded = _loaded(checkpoint_factory, "bert")
    result = explain(loaded, "classification", TEXT, "occlusion", faithfulness=True)
    label = loaded.model.config.label2id[result.target]
    tokens = loaded.tokenizer(TEXT[0])["input_ids"]
    comprehensiveness, sufficiency = _hand_faithfulness(
        loaded, tokens, list(result.special), list(result.attributions),
        lambda out, _kept: float(out.logits.softmax(-1)[0, label]))
    faithful = result.faithfulness
    assert faithful.comprehensiveness == pytest.approx(comprehensiveness, abs=1e-12)
    assert faithful.sufficiency == pytest.approx(sufficiency, abs=1e-12)
    assert faithful.aopc_comprehensiveness == pytest.approx(sum(comprehensiveness) / 5, abs=1e-12)
    data = result.to_json()["faithfulness"]
    assert data["bins"] == [1, 5, 10, 20, 50] and data["aopc_sufficiency"] == pytest.approx(sum(sufficiency) / 5)

    ner = _loaded(checkpoint_factory, "bert", "ner")  # F is read at a token: that token stays, at its new place
    result = explain(ner, "ner", ("john lives in paris with a big dog .",), "grad-x-input", faithfulness=True)
    position, name = result.target.split(":")
    position, label = int(position), ner.model.config.label2id[name]
    special = [s or i == position for i, s in enumerate(result.special)]
    tokens = ner.tokenizer("john lives in paris with a big dog .")["input_ids"]
    comprehensiveness, sufficiency = _hand_faithfulness(
        ner, tokens, special, list(result.attributions),
        lambda out, kept: float(out.logits.softmax(-1)[0, kept.index(position), label]))
    assert result.faithfulness.comprehensiveness == pytest.approx(comprehensiveness, abs=1e-12)
    assert result.faithfulness.sufficiency == pytest.approx(sufficiency, abs=1e-12)
    assert result.faithfulness.tokens == sum(not s for s in special)
    assert any("keeps the explained token" in n.text for n in result.notes)


@pytest.mark.parametrize(("task", "texts"), [("multiple-choice", ("the cat", "sat on the mat .", "ran .")),
                                             ("nsp", ("the cat sat .", "the dog ran .")),
                                             ("fill-mask", ("the cat sat on the [MASK] .",))])
def test_faithfulness_runs_for_every_kind_of_target(checkpoint_factory, task: str, texts: tuple) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    result = explain(_loaded(checkpoint_factory, "bert", task), task, texts, "gradient", faithfulness=True)
    faithful = result.faithfulness
    assert len(faithful.comprehensiveness) == len(faithful.sufficiency) == 5
    assert faithful.score == pytest.approx(result.score, abs=1e-9)
    assert all(math.isfinite(v) for v in (*faithful.comprehensiveness, *faithful.sufficiency))


def test_bounds_cancel_and_progress(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    loaded = _loaded(checkpoint_factory, "bert")
    for kwargs, message in (({"samples": 4097}, "between 8 and 4,096"), ({"samples": 7}, "between 8 and 4,096"),
                            ({"seed": -1}, "seed"), ({"baseline": "zero"}, "Integrated Gradients'"),
                            ({"baseline": "blank"}, "Unknown baseline")):
        with pytest.raises(InputError, match=message):
            explain(loaded, "classification", TEXT, "lime", **kwargs)
    for method in ("occlusion", "lime", "kernel-shap"):
        events = []
        explain(loaded, "classification", TEXT, method, samples=16, control=TaskControl(events.append))
        assert any("pass" in e.message for e in events) and events[-1].fraction == 1.0
        control = TaskControl()
        control.request_stop()
        with pytest.raises(TaskCancelled):
            explain(loaded, "classification", TEXT, method, samples=16, control=control)
