"""bertstudio explain / head-importance / fill-mask --per-layer / --ablate-heads: the CLI contract."""

from __future__ import annotations

import json

import pytest

from bertstudio.cli import main


def _json(capsys, args: list[str]) -> object:  # noqa: ANN001
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


@pytest.mark.parametrize(
    ("task", "head", "inputs"),
    [
        ("fill-mask", "MaskedLM", ["the cat sat on the [MASK] ."]),
        ("nsp", "NextSentencePrediction", ["the cat sat .", "the dog ran ."]),
        ("ner", "TokenClassification", ["john lives in paris ."]),
        ("qa", "QuestionAnswering", ["--question", "where does john live ?", "--context", "john lives in paris ."]),
        ("classify", "SequenceClassification", ["a good film .", "--pair", "a bad day ."]),
        ("choice", "MultipleChoice", ["--prompt", "the cat", "--choice", "sat .", "--choice", "ran ."]),
    ],
)
def test_explain_json_every_task(checkpoint_factory, capsys, task: str, head: str, inputs: list[str]) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", head))
    result = _json(capsys, ["explain", "--model", model, "--task", task, "--steps", "8", *inputs, "--json"])
    assert result["method"] == "integrated-gradients" and result["steps"] == 8
    assert len(result["tokens"]) == len(result["attributions"]) > 2
    assert sum(result["attributions"]) == pytest.approx(result["score"] - result["baseline_score"] + result["delta"],
                                                        abs=1e-6)
    gradient = _json(capsys, ["explain", "--model", model, "--task", task, "--method", "gradient", *inputs, "--json"])
    assert "delta" not in gradient and all(v >= 0 for v in gradient["attributions"])
    assert gradient["score"] == pytest.approx(result["score"], abs=1e-6)


def test_explain_targets_and_errors(checkpoint_factory, capsys) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    base = ["explain", "--model", model, "--task", "classify", "--method", "grad-x-input"]
    positive = _json(capsys, [*base, "a good film .", "--target", "positive", "--json"])
    negative = _json(capsys, [*base, "a good film .", "--target", "negative", "--json"])
    assert positive["target"] == "positive" and positive["score"] + negative["score"] == pytest.approx(1.0)
    for args, message in (
        ([*base, "a good film .", "--target", "neutral"], "Unknown label"),
        ([*base], "classify takes a text"),
        (["explain", "--model", model, "--task", "nsp", "one sentence"], "nsp takes two sentences"),
        ([*base, "a good film .", "--ablate-heads", "7:0"], "layers 0-1"),
    ):
        assert main(args) == 1
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err


def test_ablate_heads_changes_the_result(checkpoint_factory, capsys) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", "MaskedLM"))
    args = ["fill-mask", "--model", model, "the cat sat on the [MASK] .", "--json"]
    intact = _json(capsys, args)
    ablated = _json(capsys, [*args, "--ablate-heads", "0:0,1:1"])
    assert intact != ablated
    assert _json(capsys, args) == intact  # the heads are back on
    assert main([*args, "--ablate-heads", "0:9"]) == 1
    assert "heads 0-1" in capsys.readouterr().err
    explained = _json(capsys, ["explain", "--model", model, "--task", "fill-mask", "--method", "gradient",
                               "the cat sat on the [MASK] .", "--target", "cat", "--json"])
    off = _json(capsys, ["explain", "--model", model, "--task", "fill-mask", "--method", "gradient",
                         "the cat sat on the [MASK] .", "--target", "cat", "--ablate-heads", "0:0", "--json"])
    assert explained["score"] != off["score"]


def test_fill_mask_per_layer(checkpoint_factory, capsys) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("albert", "MaskedLM"))
    args = ["fill-mask", "--model", model, "the [MASK] sat on the [MASK] .", "--top-k", "3"]
    plain = _json(capsys, [*args, "--json"])
    both = _json(capsys, [*args, "--per-layer", "--json"])
    assert both["result"] == plain and len(both["layers"]) == 3  # embeddings + 2 layers
    assert [[c["token_id"] for c in mask] for mask in both["layers"][-1]] == [[c["token_id"] for c in m] for m in plain]
    assert main([*args, "--per-layer"]) == 0
    assert "per layer (0 = embeddings)" in capsys.readouterr().out
    assert main([*args, "--per-layer", "--compare", model]) == 1
    assert main([*args, "--json"]) == 0 and isinstance(json.loads(capsys.readouterr().out), list)


def test_head_importance(checkpoint_factory, capsys, tmp_path) -> None:  # noqa: ANN001
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    one = _json(capsys, ["head-importance", "--model", model, "--task", "classify", "a good film .", "--json"])
    assert len(one["importance"]) == 2 and len(one["importance"][0]) == 2
    assert one["normalization"] == "per-layer L2" and one["examples"] == 1
    data = tmp_path / "reviews.csv"
    data.write_text("text,label\na good film .,positive\na bad day .,negative\n", encoding="utf-8")
    labelled = _json(capsys, ["head-importance", "--model", model, "--task", "classify", "--data", str(data),
                              "--raw", "--prune", "2", "--json"])
    assert labelled["examples"] == 2 and "gold" in labelled["loss"] and labelled["normalization"] == "none"
    flat = sorted((v, [layer, head]) for layer, row in enumerate(labelled["importance"]) for head, v in enumerate(row))
    assert labelled["prune"] == [flat[0][1], flat[1][1]]
    lines = tmp_path / "pairs.txt"
    lines.write_text("the cat sat .\tthe dog ran .\nthe man ran .\tthe cat sat .\n", encoding="utf-8")
    nsp = _json(capsys, ["head-importance", "--model", str(checkpoint_factory("bert", "NextSentencePrediction")),
                         "--task", "nsp", "--data", str(lines), "--json"])
    assert nsp["examples"] == 2
    assert main(["head-importance", "--model", model, "--task", "classify", "--data", str(data), "text"]) == 1
    assert "not both" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("task", "head", "inputs", "target", "message"),
    [
        ("fill-mask", "MaskedLM", ["the cat sat on the [MASK] ."], "99999999", "Token id 99,999,999 is not in"),
        ("fill-mask", "MaskedLM", ["the cat sat on the [MASK] ."], "²", "is not one token"),
        ("classify", "SequenceClassification", ["a good film ."], "99999999", "Unknown label"),
        ("classify", "SequenceClassification", ["a good film ."], "²", "Unknown label"),
        ("ner", "TokenClassification", ["john lives in paris ."], "99999999", "is not a token index"),
        ("ner", "TokenClassification", ["john lives in paris ."], "²:O", "is not a token index"),
        ("choice", "MultipleChoice", ["--prompt", "the cat", "--choice", "sat .", "--choice", "ran ."], "²",
         "Unknown choice"),
        ("choice", "MultipleChoice", ["--prompt", "the cat", "--choice", "sat .", "--choice", "ran ."],
         "99999999999999999999999999999999", "Unknown choice"),
    ],
)
def test_explain_targets_out_of_range_or_not_ascii_digits(checkpoint_factory, capsys, task: str, head: str,  # noqa: ANN001
                                                          inputs: list[str], target: str, message: str) -> None:
    """A number past the vocabulary or the tokens, or "²" (a digit to isdigit, not to int): one message, exit 1."""
    model = str(checkpoint_factory("bert", head))
    code = main(["explain", "--model", model, "--task", task, "--method", "gradient", *inputs, "--target", target])
    err = capsys.readouterr().err
    assert code == 1 and message in err and "Traceback" not in err and "internal error" not in err, err


def test_explain_perturbation_methods_and_faithfulness(checkpoint_factory, capsys) -> None:  # noqa: ANN001
    from bertstudio.cli import explain as command
    from bertstudio.core.explain import attribution, methods

    assert command.METHODS is attribution.METHODS is methods.METHODS  # one list, read without torch by the CLI
    model = str(checkpoint_factory("bert", "SequenceClassification"))
    base = ["explain", "--model", model, "--task", "classify", "a good film about a big dog ."]
    occlusion = _json(capsys, [*base, "--method", "occlusion", "--faithfulness", "--json"])
    assert occlusion["method"] == "occlusion" and occlusion["attributions"][0] == 0.0 and "samples" not in occlusion
    faithful = occlusion["faithfulness"]
    assert faithful["bins"] == [1, 5, 10, 20, 50] and len(faithful["comprehensiveness"]) == 5
    assert faithful["aopc_sufficiency"] == pytest.approx(sum(faithful["sufficiency"]) / 5)
    lime = _json(capsys, [*base, "--method", "lime", "--samples", "16", "--seed", "3", "--json"])
    assert lime["samples"] == 16 and lime["seed"] == 3 and "faithfulness" not in lime
    assert _json(capsys, [*base, "--method", "lime", "--samples", "16", "--seed", "3", "--json"]) == lime
    zero = _json(capsys, [*base, "--steps", "4", "--baseline", "zero", "--json"])
    assert zero["baseline"] == "zero" and zero["steps"] == 4
    assert main([*base, "--method", "kernel-shap", "--samples", "16", "--faithfulness"]) == 0
    out = capsys.readouterr().out
    assert "16 samples, seed 0" in out and "comprehensiveness" in out and "AOPC" in out
    for args, message in ((["--method", "lime", "--samples", "5000"], "between 8 and 4,096"),
                          (["--method", "kernel-shap", "--seed", "x"], "seed (--seed) must be a whole number"),
                          (["--method", "occlusion", "--baseline", "zero"], "Integrated Gradients'")):
        assert main([*base, *args]) == 1
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err


def test_each_task_takes_its_input_as_its_own_command_does(capsys, tmp_path) -> None:  # noqa: ANN001
    """explain & co read a task's input through its spec's parts (cli/_inputs.py): the help lists each task's,
    another task's flag is one line, and qa's context may come from a file as `qa` takes it."""
    with pytest.raises(SystemExit):
        main(["explain", "-h"])
    assert "  qa         --question QUESTION (--context CONTEXT | --context-file F)" in capsys.readouterr().out
    for args, message in ((["--task", "nsp", "a", "b", "--pair", "c"], "nsp takes no --pair."),
                          (["--task", "qa", "--question", "q", "--context-file", str(tmp_path / "no.txt")],
                           "does not exist")):
        assert main(["explain", "--model", "unused", *args]) == 1
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
