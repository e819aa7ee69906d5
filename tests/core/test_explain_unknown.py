"""[UNK] is a word (issue 28 item 3): every method attributes, occludes and perturbs it, faithfulness
deletes it, and it is shown as the characters it stands for. Similarity's faithfulness is numbers
(issue 32 item 6). A hand-off's target needs no forward pass."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from bertstudio.core.explain.methods import METHODS
from bertstudio.core.models import LoadRequest, load_model
from tests.core.test_explain_perturbation import _hand_faithfulness

TOPICS = "categorium-bert-tiny-topics-en"
TEXT = "Great film. Terrible ending."  # its model's vocabulary has no ".": both are [UNK]


@pytest.fixture(scope="module")
def topics(real_models):  # noqa: ANN001, ANN201
    return load_model(LoadRequest(str(real_models[TOPICS]), "classification"))


def _hand_occlusion(folder, text: str, label: int) -> tuple[list[str], list[float]]:  # noqa: ANN001
    """Plain transformers: each token but [CLS]/[SEP] replaced by [PAD] in turn; the drop of P(label)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    structural = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id}

    def p(batch: torch.Tensor) -> float:
        with torch.no_grad():
            return float(model(input_ids=batch, attention_mask=torch.ones_like(batch)).logits.softmax(-1)[0, label])

    full = p(ids)
    drops = []
    for i, token in enumerate(ids[0].tolist()):
        occluded = ids.clone()
        occluded[0, i] = tokenizer.pad_token_id
        drops.append(0.0 if token in structural else full - p(occluded))
    return tokenizer.convert_ids_to_tokens(ids[0].tolist()), drops


def test_occlusion_of_unk_equals_a_hand_loop_on_the_real_topic_classifier(topics, real_models) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    ours = explain(topics, "classification", (TEXT,), "occlusion")
    label = topics.model.config.label2id[ours.target]
    tokens, drops = _hand_occlusion(real_models[TOPICS], TEXT, label)
    unknown = [i for i, t in enumerate(tokens) if t == "[UNK]"]
    assert len(unknown) == 2  # the two full stops
    assert list(ours.attributions) == pytest.approx(drops, abs=1e-5)
    assert all(abs(ours.attributions[i]) > 1e-3 for i in unknown)  # reported as 0.0 before
    assert [ours.tokens[i] for i in unknown] == [".", "."]  # shown as what they stand for
    assert [ours.special[i] for i in unknown] == [False, False]


@pytest.mark.parametrize("method", METHODS)
def test_every_method_attributes_unk(topics, method: str) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    ours = explain(topics, "classification", (TEXT,), method, steps=8, samples=32)
    unknown = [i for i, t in enumerate(ours.tokens) if t == "."]
    assert len(unknown) == 2, ours.tokens
    assert all(ours.attributions[i] != 0.0 for i in unknown), (method, ours.attributions)
    assert ours.special == (True, *[False] * (len(ours.tokens) - 2), True)  # only [CLS] and [SEP]


def test_faithfulness_deletes_unk_like_any_word(topics) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    result = explain(topics, "classification", (TEXT,), "occlusion", faithfulness=True)
    label = topics.model.config.label2id[result.target]
    ids = topics.tokenizer(TEXT)["input_ids"]
    comprehensiveness, sufficiency = _hand_faithfulness(
        topics, ids, list(result.special), list(result.attributions),
        lambda out, _kept: float(out.logits.softmax(-1)[0, label]))
    faithful = result.faithfulness
    assert faithful.tokens == len(ids) - 2  # the [UNK]s are counted
    assert faithful.comprehensiveness == pytest.approx(comprehensiveness, abs=1e-6)
    assert faithful.sufficiency == pytest.approx(sufficiency, abs=1e-6)
    assert faithful.aopc_comprehensiveness == pytest.approx(sum(comprehensiveness) / 5, abs=1e-6)


def test_unknown_labels_follow_offsets_through_a_pair_and_a_cut() -> None:
    from transformers import AutoTokenizer

    from bertstudio.core.explain.unknown import unknown_labels
    from tests.conftest import REAL_MODELS_DIR

    tokenizer = AutoTokenizer.from_pretrained(REAL_MODELS_DIR / TOPICS)
    ids = tokenizer("a b. c", "d; e")["input_ids"]
    labels = unknown_labels(tokenizer, ids, ("a b. c", "d; e"))
    assert sorted(labels.values()) == [".", ";"]
    cut = ids[:1] + ids[3:]  # a window that starts later
    assert unknown_labels(tokenizer, cut, ("a b. c", "d; e")) == {k - 2: v for k, v in labels.items()}
    assert unknown_labels(tokenizer, tokenizer("no unknown")["input_ids"], ("no unknown",)) == {}


def _hand_similarity_faithfulness(loaded, a: str, b: str, special, values) -> tuple[list[float], list[float]]:  # noqa: ANN001
    """ERASER for the cosine of A's mean-pooled states with B's, tokens of A deleted by hand."""
    import torch

    def embed(ids: list[int]) -> torch.Tensor:
        tensor = torch.tensor([ids])
        with torch.no_grad():
            return loaded.model(input_ids=tensor, attention_mask=torch.ones_like(tensor)).last_hidden_state.mean(1)

    other = embed(loaded.tokenizer(b)["input_ids"])
    ids = loaded.tokenizer(a)["input_ids"]
    return _hand_faithfulness(loaded, ids, special, values, lambda out, _kept: float(
        torch.nn.functional.cosine_similarity(out.last_hidden_state.mean(1), other, dim=-1)[0]))


@pytest.mark.parametrize("method", ["occlusion", "lime", "kernel-shap", "integrated-gradients"])
def test_similarity_faithfulness_is_numbers_not_nan(checkpoint_factory, method: str) -> None:  # noqa: ANN001
    """Issue 32 item 6: every comprehensiveness, sufficiency and AOPC was NaN (deleted tokens' states
    were put back as -inf and mean-pooled). A tiny encoder; the real one: the CLI test below."""
    from bertstudio.core.explain.attribution import explain

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "MaskedLM")), "similarity"))
    a, b = "the cat sat on the mat .", "a big dog ran ."
    result = explain(loaded, "similarity", (a, b), method, steps=8, samples=24, faithfulness=True)
    faithful = result.faithfulness
    values = (*faithful.comprehensiveness, *faithful.sufficiency, faithful.aopc_comprehensiveness,
              faithful.aopc_sufficiency)
    assert all(v is not None and math.isfinite(v) for v in values), faithful
    comprehensiveness, sufficiency = _hand_similarity_faithfulness(loaded, a, b, list(result.special),
                                                                   list(result.attributions))
    assert faithful.comprehensiveness == pytest.approx(comprehensiveness, abs=1e-5)
    assert faithful.sufficiency == pytest.approx(sufficiency, abs=1e-5)
    assert "NaN" not in json.dumps(result.to_json())


def test_an_undefined_value_is_null_with_a_note(topics) -> None:  # noqa: ANN001
    """F not a number on the shortened inputs: None (JSON null) and a note, never a silent NaN."""
    from bertstudio.core.explain.faithfulness import measure
    from bertstudio.core.explain.targets import prepare
    from bertstudio.core.progress import TaskControl

    prepared = prepare(topics, "classification", (TEXT,))
    calls = []

    def nan_after_the_full_input(outputs):  # noqa: ANN001, ANN202
        calls.append(1)
        value = prepared.probability(outputs)
        return value if len(calls) == 1 else value * float("nan")

    found, remarks = measure(topics, replace(prepared, probability=nan_after_the_full_input),
                             [0.1 * i for i in range(len(prepared.keep))], TaskControl())
    assert found is not None and math.isfinite(found.score)
    assert set(found.comprehensiveness) == set(found.sufficiency) == {None}
    assert found.aopc_comprehensiveness is None and found.aopc_sufficiency is None
    data = json.dumps(found.to_json())
    assert "NaN" not in data and json.loads(data)["aopc_comprehensiveness"] is None
    assert any("undefined" in n.text for n in remarks)


def test_a_handed_target_needs_no_forward_pass(topics) -> None:  # noqa: ANN001
    from bertstudio.core.explain.inputs import target_of
    from bertstudio.core.explain.targets import prepare
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.classification import ClassificationInput
    from bertstudio.core.tasks.spec import spec_for

    result = spec_for("classification").run(topics, ClassificationInput(TEXT), TaskControl())
    target = target_of("classification", result)
    assert target == result.first.top.label
    calls = []
    handle = topics.model.register_forward_hook(lambda *_: calls.append(1))
    try:
        prepared = prepare(topics, "classification", (TEXT,), target)
    finally:
        handle.remove()
    assert calls == [] and prepared.target == target


def test_cli_reads_a_two_line_text_as_one_text(checkpoint_factory, capfd) -> None:  # noqa: ANN001
    """`explain --task classify "a\\nb"`: one text (one sequence), as the Classification tab reads it."""
    from transformers import AutoTokenizer

    from tests.conftest import run_cli

    folder = checkpoint_factory("bert", "SequenceClassification")
    text = "a good film .\nthe big dog ."
    done = run_cli(capfd, "explain", "--model", str(folder), "--task", "classify", "--method", "occlusion", text,
                   "--json")
    assert done.returncode == 0, done.stderr
    tokenizer = AutoTokenizer.from_pretrained(folder)
    assert json.loads(done.stdout)["tokens"] == tokenizer.convert_ids_to_tokens(tokenizer(text)["input_ids"])


def test_cli_similarity_faithfulness_json_has_numbers(real_models, capfd) -> None:  # noqa: ANN001
    from tests.conftest import run_cli

    done = run_cli(capfd, "explain", "--model", str(real_models["all-minilm-l6-v2"]), "--task", "similarity",
                   "--method", "occlusion", "--faithfulness", "A cat sits on a mat.", "A dog lies on a rug.", "--json")
    assert done.returncode == 0, done.stderr
    assert "NaN" not in done.stdout
    faithful = json.loads(done.stdout)["faithfulness"]
    assert all(isinstance(v, float) for v in (*faithful["comprehensiveness"], *faithful["sufficiency"],
                                              faithful["aopc_comprehensiveness"], faithful["aopc_sufficiency"]))
