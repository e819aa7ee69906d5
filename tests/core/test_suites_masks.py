"""`{mask}` in suite templates (issue 31): the masked LM's top-k words, summed over the template's
contexts, equal a hand loop over transformers' fill-mask pipeline (the real SMILES ALBERT and a tiny
random BERT); the words fill `{mask}` like a slot list; a `{mask}` with no masked LM is one clear
message; `bertstudio check --mask-model` prints and uses the words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.models import load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.suites.masks import (
    MAX_CONTEXTS,
    contexts,
    mask_request,
    masked_templates,
    model_predictor,
    suggest,
    suggest_all,
)
from bertstudio.core.suites.suite import parse_suite
from tests.conftest import run_cli

SUITE = {"task": "classify", "mask_model": "some-mlm", "tests": [
    {"name": "masked", "type": "MFT", "template": "the {a} was {mask}", "fill": {"a": ["cat", "dog"]},
     "expect": "positive"},
    {"name": "plain", "type": "MFT", "template": "the {a} was {mask}", "fill": {"a": ["cat"], "mask": ["ok"]},
     "expect": "positive"},
]}


def _by_hand(pipe, texts: list[str], k: int) -> list[str]:  # noqa: ANN001
    totals: dict[str, float] = {}
    special = set(pipe.tokenizer.all_special_tokens)
    for text in texts:
        for c in pipe(text, top_k=k):
            word = c["token_str"].strip()
            if word and not word.startswith("##") and word not in special:
                totals[word] = totals.get(word, 0.0) + c["score"]
    return [w for w, _ in sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:k]]


def test_suggestions_sum_over_contexts_and_fill_the_slot() -> None:
    seen: list[str] = []

    def predict(texts):  # noqa: ANN001, ANN202
        seen.extend(texts)
        return [[("good", 0.5), ("bad", 0.4), ("##ly", 0.9)] if "cat" in t else [("bad", 0.6), ("fine", 0.1)]
                for t in texts]

    assert masked_templates(SUITE) == {"masked": ["the {a} was {mask}"]}  # "plain" fills mask itself
    words = suggest_all(SUITE, predict, "[MASK]", k=2)
    assert seen == ["the cat was [MASK]", "the dog was [MASK]"]
    assert words == {"masked": ["bad", "good"]}  # 1.0 and 0.5; a wordpiece is no word
    suite = parse_suite(SUITE, masks=words)
    assert [c.original for c in suite.tests[0].cases] == [
        ("the cat was bad",), ("the cat was good",), ("the dog was bad",), ("the dog was good",)]
    assert suite.masks == {"masked": ("bad", "good")} and suite.mask_model == "some-mlm"
    # the person unticks a word: only the kept ones fill the slot
    assert len(parse_suite(SUITE, masks={"masked": ["good"]}).tests[0].cases) == 2


def test_a_mask_without_a_masked_lm_names_the_test_and_field() -> None:
    with pytest.raises(InputError, match="test 'masked', field 'template'.*masked LM"):
        parse_suite(SUITE)


def test_many_contexts_are_a_seeded_sample() -> None:
    fill = {"a": [str(i) for i in range(30)], "b": [str(i) for i in range(5)]}
    one = contexts(["{a} and {b} is {mask}"], fill, "<mask>", seed=1)
    assert len(one) == MAX_CONTEXTS and one == contexts(["{a} and {b} is {mask}"], fill, "<mask>", seed=1)
    assert all(t.endswith("is <mask>") for t in one)
    assert one != contexts(["{a} and {b} is {mask}"], fill, "<mask>", seed=2)


def test_suggestions_equal_the_pipeline_on_the_smiles_albert(real_models) -> None:  # noqa: ANN001
    from transformers import pipeline

    folder = str(real_models["rxnmapper-albert-smiles-mlm"])
    loaded = load_model(mask_request(folder), TaskControl())
    predictor, token = model_predictor(loaded, 5)
    assert token == "[MASK]"
    fill = {"a": ["C", "C C", "O"]}
    words = suggest(["{a} C {mask} O"], fill, predictor, token, k=5)
    pipe = pipeline("fill-mask", model=folder)
    assert words == _by_hand(pipe, [f"{a} C [MASK] O" for a in fill["a"]], 5)
    assert len(words) == 5


def test_check_mask_model_on_a_tiny_random_mlm(checkpoint_factory, capfd, tmp_path: Path) -> None:  # noqa: ANN001
    from transformers import pipeline

    mlm = checkpoint_factory("bert")
    classifier = checkpoint_factory("bert", "SequenceClassification")
    data = {**SUITE, "mask_model": "not-this-one", "mask_top_k": 3}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = run_cli(capfd, "check", "--model", str(classifier), "--suite", str(path), "--mask-model", str(mlm),
                   "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    pipe = pipeline("fill-mask", model=str(mlm))
    expected = _by_hand(pipe, ["the cat was [MASK]", "the dog was [MASK]"], 3)
    assert out["masks"] == {"masked": expected}
    assert out["tests"][0]["cases"] == 2 * len(expected) and "{mask} in 'masked'" in done.stderr

    del data["mask_model"]
    path.write_text(json.dumps(data), encoding="utf-8")
    done = run_cli(capfd, "check", "--model", str(classifier), "--suite", str(path))
    assert done.returncode == 1 and "Traceback" not in done.stderr and "test 'masked', field 'template'" in done.stderr
