"""Multiple choice equals AutoModelForMultipleChoice's logits; head warning; bad input explained."""

from __future__ import annotations

import pytest

from bertstudio.core.errors import InputError, MissingHeadError
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.multiple_choice import compare, parse_choices, predict

PROMPT = "the man sat on the"
ENDINGS = ["mat", "big old house", "river and the tree"]


@pytest.mark.parametrize("arch", ["bert", "roberta", "distilbert"])
def test_equals_auto_model_logits(checkpoint_factory, arch: str) -> None:
    import torch
    from transformers import AutoModelForMultipleChoice, AutoTokenizer

    folder = checkpoint_factory(arch, "MultipleChoice")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForMultipleChoice.from_pretrained(folder).eval()
    encoded = tokenizer([PROMPT] * 3, ENDINGS, padding=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**{k: v.unsqueeze(0) for k, v in encoded.items()}).logits[0]
    expected = torch.softmax(logits, -1).tolist()

    loaded = load_model(LoadRequest(str(folder), "multiple-choice"))
    assert not loaded.info.head_warning
    result = predict(loaded, PROMPT, ENDINGS)
    by_choice = {c.choice: c for c in result.choices}
    for i, ending in enumerate(ENDINGS):
        assert by_choice[ending].logit == pytest.approx(float(logits[i]), abs=1e-5)
        assert by_choice[ending].score == pytest.approx(expected[i], abs=1e-6)
        assert by_choice[ending].index == i
    scores = [c.score for c in result.choices]
    assert scores == sorted(scores, reverse=True) and sum(scores) == pytest.approx(1.0)
    assert result.to_json()[0] == {"choice": result.best.choice, "score": result.best.score}


def test_no_trained_head_warns(checkpoint_factory, real_models) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "MaskedLM")), "multiple-choice"))
    assert "no trained multiple-choice head" in loaded.info.head_warning
    from bertstudio.core.jobs import run_spec
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.multiple_choice import ChoiceInput
    from bertstudio.core.tasks.multiple_choice.spec import SPEC

    outcome = run_spec(SPEC, loaded.info.request, ChoiceInput(PROMPT, tuple(ENDINGS)), TaskControl())
    assert [n.text for n in outcome.notes] == [loaded.info.head_warning]  # from run_spec, once
    assert not outcome.result.notes
    # A 27-label topic classifier's `classifier` cannot serve as the one-logit choice head: refused clearly.
    with pytest.raises(MissingHeadError, match="does not fit multiple-choice"):
        load_model(LoadRequest(str(real_models["categorium-bert-tiny-topics-en"]), "multiple-choice"))


@pytest.mark.parametrize(
    "prompt,choices,match",
    [("", ["a", "b"], "prompt is empty"), ("p", ["only one"], "at least two"), ("p", ["a", " "], "empty")],
)
def test_bad_input(checkpoint_factory, prompt, choices, match) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "MultipleChoice")), "multiple-choice"))
    with pytest.raises(InputError, match=match):
        predict(loaded, prompt, choices)


def test_long_input_is_cut(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "MultipleChoice")), "multiple-choice"))
    result = predict(loaded, "the dog ran fast . " * 40, ["the cat", "a mat"])
    assert result.truncated and "cut" in result.notes[0].text


def test_parse_and_compare(checkpoint_factory) -> None:
    assert parse_choices("a\n\n b \n") == ["a", "b"]
    a = load_model(LoadRequest(str(checkpoint_factory("bert", "MultipleChoice")), "multiple-choice"))
    b = load_model(LoadRequest(str(checkpoint_factory("roberta", "MultipleChoice")), "multiple-choice"))
    ra, rb = predict(a, PROMPT, ENDINGS), predict(b, PROMPT, ENDINGS)
    diff = compare(ra, rb)
    assert diff.top_a == ra.best.choice and diff.top_b == rb.best.choice
    assert {d.label for d in diff.deltas} == set(ENDINGS)


def test_cli_choice_and_compare(capsys, checkpoint_factory) -> None:
    import json

    from bertstudio.cli import main

    bert = str(checkpoint_factory("bert", "MultipleChoice"))
    args = ["choice", "--model", bert, "--prompt", PROMPT] + [x for e in ENDINGS for x in ("--choice", e)]
    assert main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {r["choice"] for r in out} == set(ENDINGS) and sum(r["score"] for r in out) == pytest.approx(1.0)
    roberta = str(checkpoint_factory("roberta", "MultipleChoice"))
    assert main(args + ["--compare", roberta, "--json"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert both["result"] == out and both["compare"]["model"] == roberta
    assert {d["label"] for d in both["compare"]["differences"]["deltas"]} == set(ENDINGS)
    assert main(["choice", "--model", bert, "--prompt", PROMPT, "--choice", "one", "--json"]) == 1
    assert "at least two" in capsys.readouterr().err
