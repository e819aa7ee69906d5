"""Exactness of the explanations on tiny random checkpoints: each equals an independent reference."""

from __future__ import annotations

import pytest

from bertstudio.core.errors import InputError, TaskCancelled
from bertstudio.core.models import LoadRequest, load_uncached
from bertstudio.core.progress import TaskControl

ARCHS = ("bert", "roberta", "albert", "distilbert")
HEADS = {"fill-mask": "MaskedLM", "classification": "SequenceClassification", "ner": "TokenClassification",
         "qa": "QuestionAnswering", "multiple-choice": "MultipleChoice", "nsp": "NextSentencePrediction"}
TEXTS = {
    "fill-mask": ("the cat sat on the [MASK] .",),
    "classification": ("a good film about a big dog .",),
    "ner": ("john lives in paris .",),
    "qa": ("where does john live ?", "john lives in paris ."),
    "multiple-choice": ("the cat", "sat on the mat .", "ran fast ."),
    "nsp": ("the cat sat .", "the dog ran ."),
}


def _loaded(checkpoint_factory, arch: str, task: str):  # noqa: ANN001, ANN202
    return load_uncached(LoadRequest(str(checkpoint_factory(arch, HEADS[task])), task))


# -- ablation ---------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ARCHS + ("electra",))
def test_ablation_equals_a_hook_that_zeroes_the_slice(checkpoint_factory, arch: str) -> None:  # noqa: ANN001
    import torch

    from bertstudio.core.explain.ablation import head_layout, heads_switched_off

    loaded = _loaded(checkpoint_factory, arch, "fill-mask")
    model = loaded.model
    encoding = loaded.tokenizer("the cat sat on the mat .", return_tensors="pt")
    heads = ((1, 0),)
    with torch.no_grad():
        intact = model(**encoding).logits
        with heads_switched_off(model, heads):
            ours = model(**encoding).logits
    layout = head_layout(model)
    width = model.config.hidden_size // layout.heads
    calls = [0]

    def reference(_module, inputs):  # noqa: ANN001, ANN202 - written out by hand, no shared code
        layer = calls[0] % layout.layers if arch == "albert" else target_layer
        calls[0] += 1
        if layer != 1:
            return None
        hidden = inputs[0].clone()
        hidden[..., 0:width] = 0.0
        return (hidden,)

    base = getattr(model, model.base_model_prefix)
    if arch == "albert":
        module, target_layer = base.encoder.albert_layer_groups[0].albert_layers[0].attention.dense, None
    elif arch == "distilbert":
        module, target_layer = base.transformer.layer[1].attention.out_lin, 1
    else:
        module, target_layer = base.encoder.layer[1].attention.output.dense, 1
    handle = module.register_forward_pre_hook(reference)
    try:
        with torch.no_grad():
            expected = model(**encoding).logits
    finally:
        handle.remove()
    assert torch.allclose(ours, expected, atol=1e-6)
    assert not torch.allclose(ours, intact, atol=1e-4)
    with torch.no_grad():
        assert torch.equal(model(**encoding).logits, intact)  # nothing left behind


def test_ablation_removes_hooks_on_errors_and_checks_ranges(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.explain.ablation import head_layout, heads_switched_off

    model = _loaded(checkpoint_factory, "bert", "fill-mask").model
    modules = [m for m in model.modules()]

    def hooks() -> int:
        return sum(len(m._forward_pre_hooks) for m in modules)

    before = hooks()
    with pytest.raises(RuntimeError), heads_switched_off(model, ((0, 1),)):
        assert hooks() == before + head_layout(model).layers
        raise RuntimeError("boom")
    assert hooks() == before
    with pytest.raises(InputError, match="layers 0-1"), heads_switched_off(model, ((2, 0),)):
        pass
    with pytest.raises(InputError, match="heads 0-1"), heads_switched_off(model, ((0, 5),)):
        pass
    assert hooks() == before


# -- attributions -----------------------------------------------------------------------------
def _captum_reference(loaded, task: str, steps: int):  # noqa: ANN001, ANN202
    """LayerIntegratedGradients run directly: same forward, target, baseline, steps."""
    import torch
    from captum.attr import LayerIntegratedGradients

    from bertstudio.core.explain.forward import baseline_ids, forward_of
    from bertstudio.core.explain.targets import prepare

    prepared = prepare(loaded, task, TEXTS[task])
    forward, extra = forward_of(loaded, prepared)
    ids = prepared.inputs["input_ids"]
    lig = LayerIntegratedGradients(forward, loaded.model.get_input_embeddings())
    baseline = baseline_ids(loaded, prepared)
    with torch.enable_grad():
        attributions = lig.attribute(ids, baselines=baseline, additional_forward_args=extra, n_steps=steps)
    with torch.no_grad():  # captum's own delta needs one example per row; multiple choice has a row per choice
        gap = float(forward(ids, *extra)[0] - forward(baseline, *extra)[0])
    per_token = attributions.reshape(-1, attributions.shape[-1]).sum(-1)
    return [float(per_token[i]) for i in prepared.keep], float(attributions.sum()) - gap


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("task", ["fill-mask", "classification", "ner", "qa", "multiple-choice"])
def test_integrated_gradients_equal_captum_called_directly(checkpoint_factory, arch: str, task: str) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    loaded = _loaded(checkpoint_factory, arch, task)
    ours = explain(loaded, task, TEXTS[task], "integrated-gradients", steps=20)
    expected, delta = _captum_reference(loaded, task, 20)
    assert ours.steps == 20 and len(ours.tokens) == len(expected)
    assert ours.attributions == pytest.approx(expected, abs=1e-6)
    assert ours.delta == pytest.approx(delta, abs=1e-6)
    # completeness: the attributions add up to F(input) - F(baseline)
    assert sum(ours.attributions) == pytest.approx(ours.score - ours.baseline_score, abs=1e-3)


@pytest.mark.parametrize("arch", ARCHS)
def test_gradient_times_input_equals_a_torch_reference(checkpoint_factory, arch: str) -> None:  # noqa: ANN001
    import torch

    from bertstudio.core.explain.attribution import explain

    loaded = _loaded(checkpoint_factory, arch, "classification")
    text = TEXTS["classification"][0]
    ours = explain(loaded, "classification", (text,), "grad-x-input")
    norms = explain(loaded, "classification", (text,), "gradient")
    model = loaded.model
    encoding = loaded.tokenizer(text, return_tensors="pt")
    embeddings = model.get_input_embeddings()(encoding["input_ids"]).detach().requires_grad_(True)
    captured = {}

    def swap(_module, _inputs, _output):  # noqa: ANN001, ANN202 - feed our leaf in place of the lookup
        captured["used"] = True
        return embeddings

    handle = model.get_input_embeddings().register_forward_hook(swap)
    try:
        probability = model(**encoding).logits.softmax(-1)[0, int(model(**encoding).logits.argmax())]
        (grad,) = torch.autograd.grad(probability, embeddings)
    finally:
        handle.remove()
    assert captured["used"]
    assert list(ours.attributions) == pytest.approx((grad * embeddings).sum(-1)[0].tolist(), abs=1e-6)
    assert list(norms.attributions) == pytest.approx(grad.norm(dim=-1)[0].tolist(), abs=1e-6)
    assert ours.score == pytest.approx(float(probability.detach()), abs=1e-6)


def test_targets_follow_the_cli_contract(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain
    from bertstudio.core.tasks.fill_mask import predict

    loaded = _loaded(checkpoint_factory, "bert", "fill-mask")
    top = predict(loaded, TEXTS["fill-mask"][0], 3).masks[0].candidates
    default = explain(loaded, "fill-mask", TEXTS["fill-mask"], "gradient")
    assert default.target == top[0].token and default.score == pytest.approx(top[0].score, abs=1e-6)
    second = explain(loaded, "fill-mask", TEXTS["fill-mask"], "gradient", target=top[1].token)
    assert second.score == pytest.approx(top[1].score, abs=1e-6)
    with pytest.raises(InputError, match="not one token"):
        explain(loaded, "fill-mask", TEXTS["fill-mask"], "gradient", target="notawordatall")
    nsp = _loaded(checkpoint_factory, "bert", "nsp")
    is_next = explain(nsp, "nsp", TEXTS["nsp"], "gradient")
    not_next = explain(nsp, "nsp", TEXTS["nsp"], "gradient", target="not_next")
    assert is_next.target == "is_next" and is_next.score + not_next.score == pytest.approx(1.0, abs=1e-6)
    choice = _loaded(checkpoint_factory, "bert", "multiple-choice")
    result = explain(choice, "multiple-choice", TEXTS["multiple-choice"], "gradient", target="1")
    assert result.target == 1 and set(result.rows) == {0, 1}
    with pytest.raises(InputError, match="method"):
        explain(loaded, "fill-mask", TEXTS["fill-mask"], "saliency")


def test_integrated_gradients_converge_cancel_and_progress(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    loaded = _loaded(checkpoint_factory, "bert", "classification")
    events = []
    result = explain(loaded, "classification", TEXTS["classification"], steps=1, converge=True,
                     control=TaskControl(events.append))
    gap = abs(result.score - result.baseline_score)
    assert result.steps in (1, 2, 4, 8)
    assert abs(result.delta) <= max(0.01 * gap, 1e-6) or any("did not converge" in n.text for n in result.notes)
    assert events and events[-1].fraction == 1.0
    control = TaskControl()
    control.request_stop()
    with pytest.raises(TaskCancelled):
        explain(loaded, "classification", TEXTS["classification"], control=control)
    modules = list(loaded.model.modules())
    assert all(not m._forward_hooks for m in modules)  # captum's hooks are gone after the cancel


# -- per-layer predictions and head importance -------------------------------------------------
@pytest.mark.parametrize("arch", ARCHS + ("electra",))
def test_per_layer_last_layer_equals_fill_mask(checkpoint_factory, arch: str) -> None:  # noqa: ANN001
    from bertstudio.core.tasks.fill_mask import in_mask_of, predict
    from bertstudio.core.tasks.fill_mask.layers import per_layer

    loaded = _loaded(checkpoint_factory, arch, "fill-mask")
    text = in_mask_of(loaded, "the [MASK] sat on the [MASK] .")
    layers = per_layer(loaded, text, top_k=4)
    expected = predict(loaded, text, 4)
    assert len(layers.layers) == loaded.model.config.to_dict().get("num_hidden_layers",
                                                                  loaded.model.config.to_dict().get("n_layers")) + 1
    last = layers.layers[-1]
    for mask, reference in zip(last, expected.masks, strict=True):
        assert [c.token_id for c in mask] == [c.token_id for c in reference.candidates]
        assert [c.token for c in mask] == [c.token for c in reference.candidates]
        assert [c.score for c in mask] == pytest.approx([c.score for c in reference.candidates], abs=1e-6)


def test_head_importance_matches_finite_differences(checkpoint_factory) -> None:  # noqa: ANN001
    import torch

    from bertstudio.core.explain.ablation import head_gates
    from bertstudio.core.explain.importance import Example, head_importance
    from bertstudio.core.explain.targets import prepare

    loaded = _loaded(checkpoint_factory, "bert", "classification")
    loaded.model.double()  # finite differences need the precision
    examples = [Example(("a good film .",)), Example(("a bad day .",), "negative")]
    raw = head_importance(loaded, "classification", examples, normalize=False)
    scaled = head_importance(loaded, "classification", examples)
    assert len(raw.importance) == 2 and len(raw.importance[0]) == 2 and scaled.normalization == "per-layer L2"
    for row in scaled.importance:
        assert sum(v * v for v in row) == pytest.approx(1.0, abs=1e-5)

    def loss(gates: torch.Tensor, chosen: list) -> float:  # noqa: ANN001
        total = 0.0
        for example in chosen:
            prepared = prepare(loaded, "classification", example.texts, example.label)
            with torch.no_grad(), head_gates(loaded.model, gates):
                total += float(-torch.log(prepared.probability(loaded.model(**prepared.inputs)).double()))
        return total

    single = head_importance(loaded, "classification", examples[1:], normalize=False)
    eps = 1e-4
    for layer in range(2):
        for head in range(2):
            plus, minus = torch.ones(2, 2, dtype=torch.float64), torch.ones(2, 2, dtype=torch.float64)
            plus[layer, head] += eps
            minus[layer, head] -= eps
            derivative = (loss(plus, examples[1:]) - loss(minus, examples[1:])) / (2 * eps)
            assert single.importance[layer][head] == pytest.approx(abs(derivative), rel=1e-4, abs=1e-9)
    total = [[a + b for a, b in zip(r1, r2, strict=True)] for r1, r2 in zip(
        head_importance(loaded, "classification", examples[:1], normalize=False).importance, single.importance,
        strict=True)]
    assert [list(row) for row in raw.importance] == [pytest.approx(row, abs=1e-6) for row in total]
    flat = sorted((v, (layer, head)) for layer, row in enumerate(raw.importance) for head, v in enumerate(row))
    assert raw.least_important(2) == (flat[0][1], flat[1][1])
