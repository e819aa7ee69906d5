"""NSP equals BertForNextSentencePrediction / BertForPreTraining; models without a trained head are refused."""

from __future__ import annotations

import pytest

from bertstudio.core.errors import InputError, MissingHeadError
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.nsp import IS_NEXT, candidates_from_lines, predict, rank

A = "the cat sat on the mat ."
B = "the dog ran fast in the night ."


def _reference_logits(folder, head: str, a: str, b: str) -> list[float]:
    import torch
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = getattr(transformers, f"BertFor{head}").from_pretrained(folder).eval()
    with torch.no_grad():
        output = model(**tokenizer(a, b, return_tensors="pt"))
    logits = output.seq_relationship_logits if head == "PreTraining" else output.logits
    return logits[0].tolist()


@pytest.mark.parametrize("head", ["NextSentencePrediction", "PreTraining"])
def test_equals_transformers_forward(checkpoint_factory, head: str) -> None:
    import torch

    folder = checkpoint_factory("bert", head)
    loaded = load_model(LoadRequest(str(folder), "nsp"))
    assert loaded.info.head_report.complete
    expected = _reference_logits(folder, head, A, B)
    result = predict(loaded, A, B)
    assert list(result.logits) == pytest.approx(expected, abs=1e-5)
    probabilities = torch.softmax(torch.tensor(expected), -1).tolist()
    assert result.is_next == pytest.approx(probabilities[IS_NEXT], abs=1e-6)
    assert result.not_next == pytest.approx(probabilities[1], abs=1e-6)
    assert result.is_next + result.not_next == pytest.approx(1.0)
    assert set(result.to_json()) == {"is_next", "not_next", "logits", "notes"} and result.to_json()["notes"] == []


def test_rank_sorts_and_equals_single_pairs(checkpoint_factory) -> None:
    folder = checkpoint_factory("bert", "PreTraining")
    loaded = load_model(LoadRequest(str(folder), "nsp"))
    candidates = [B, "paris is the capital of france .", "he was born in a small house by the river ."]
    ranking = rank(loaded, A, candidates)
    scores = [r.is_next for r in ranking.results]
    assert scores == sorted(scores, reverse=True)
    assert sorted(r.sentence_b for r in ranking.results) == sorted(candidates)
    for r in ranking.results:  # padding in the batch changes nothing
        assert list(r.logits) == pytest.approx(_reference_logits(folder, "PreTraining", A, r.sentence_b), abs=1e-5)
    assert [row["sentence_b"] for row in ranking.to_json()] == [r.sentence_b for r in ranking.results]


@pytest.mark.parametrize(("arch", "missing"), [("distilbert", "no DistilBertForNextSentencePrediction class"),
                                               ("roberta", "no RobertaForNextSentencePrediction class")])
def test_architectures_without_nsp_class_refused(checkpoint_factory, arch: str, missing: str) -> None:
    with pytest.raises(MissingHeadError, match=missing):
        load_model(LoadRequest(str(checkpoint_factory(arch, "MaskedLM")), "nsp"))


@pytest.mark.parametrize("head", ["QuestionAnswering", "MaskedLM"])
def test_bert_without_trained_nsp_head_refused(checkpoint_factory, head: str) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", head)), "nsp"))
    with pytest.raises(MissingHeadError, match="seq_relationship"):
        predict(loaded, A, B)
    with pytest.raises(MissingHeadError):
        rank(loaded, A, [B])


def test_real_minilm_refused(real_models) -> None:
    loaded = load_model(LoadRequest(str(real_models["all-minilm-l6-v2"]), "nsp"))
    with pytest.raises(MissingHeadError, match="no trained next-sentence-prediction head"):
        predict(loaded, "A man is eating food.", "He likes bread.")


def test_bad_input(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "NextSentencePrediction")), "nsp"))
    with pytest.raises(InputError, match="sentence A"):
        predict(loaded, " ", B)
    with pytest.raises(InputError, match="sentence B"):
        predict(loaded, A, "")
    with pytest.raises(InputError, match="candidate"):
        rank(loaded, A, ["", "  "])
    assert candidates_from_lines(" one\n\n two \n") == ["one", "two"]


def test_long_pair_is_cut_and_said(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "NextSentencePrediction")), "nsp"))
    result = predict(loaded, A * 20, B)
    assert result.truncated and "cut" in result.notes[0].text and result.notes[0].level == "warning"
    assert result.to_json()["notes"][0]["text"] == result.notes[0].text
    ranking = rank(loaded, A * 20, [B, A])
    assert "cut" in ranking.notes[0].text


def test_cli_json(checkpoint_factory, capsys) -> None:
    import json

    from bertstudio.cli import main

    folder = str(checkpoint_factory("bert", "PreTraining"))
    assert main(["nsp", "--model", folder, A, B, "--json"]) == 0
    single = json.loads(capsys.readouterr().out)
    assert set(single) == {"is_next", "not_next", "logits", "notes"}
    assert single["logits"] == pytest.approx(_reference_logits(folder, "PreTraining", A, B), abs=1e-5)
    assert main(["nsp", "--model", folder, A, B, "paris is the capital of france .", "--json"]) == 0
    ranked = json.loads(capsys.readouterr().out)
    assert len(ranked) == 2 and ranked[0]["is_next"] >= ranked[1]["is_next"]
    assert main(["nsp", "--model", str(checkpoint_factory("bert", "QuestionAnswering")), A, B, "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "no trained next-sentence-prediction head" in captured.err


@pytest.mark.slow
def test_trained_minilm_ranks_held_out_continuations_first(real_models) -> None:
    from tests.fixtures.trained_nsp_ner import NSP_HELD_OUT, NSP_TEXT, trained_nsp

    loaded = load_model(LoadRequest(str(trained_nsp(real_models["all-minilm-l6-v2"])), "nsp"))
    assert loaded.info.head_report.complete
    for a, continuation, unrelated in NSP_HELD_OUT:
        assert a not in NSP_TEXT and continuation not in NSP_TEXT
        ranking = rank(loaded, a, [*unrelated, continuation])
        assert ranking.results[0].sentence_b == continuation, ranking
        coherent = predict(loaded, a, continuation)
        assert all(coherent.is_next > predict(loaded, a, b).is_next for b in unrelated)


def test_cli_compare_json(checkpoint_factory, tmp_path, capsys) -> None:
    """--compare adds model B's result (equal to transformers') and the differences A -> B."""
    import json

    from bertstudio.cli import main
    from tests.fixtures.checkpoints import build_checkpoint

    first = str(checkpoint_factory("bert", "PreTraining"))
    second = str(build_checkpoint(tmp_path / "bert-pt-seed1", "bert", "PreTraining", seed=1))
    assert main(["nsp", "--model", first, A, B, "--compare", second, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == first and out["compare"]["model"] == second
    a, b = out["result"], out["compare"]["result"]
    assert a["logits"] == pytest.approx(_reference_logits(first, "PreTraining", A, B), abs=1e-5)
    assert b["logits"] == pytest.approx(_reference_logits(second, "PreTraining", A, B), abs=1e-5)
    assert a["logits"] != pytest.approx(b["logits"], abs=1e-7)  # two different models
    diff = out["compare"]["differences"]
    top = {True: "IsNext (label 0)", False: "NotNext (label 1)"}
    assert diff["top_a"] == top[a["is_next"] >= a["not_next"]] and diff["top_b"] == top[b["is_next"] >= b["not_next"]]
    assert diff["top_changed"] == (diff["top_a"] != diff["top_b"])
    deltas = {d["label"]: d["delta"] for d in diff["deltas"]}
    assert deltas["IsNext (label 0)"] == pytest.approx(b["is_next"] - a["is_next"], abs=1e-7)
    assert deltas["NotNext (label 1)"] == pytest.approx(b["not_next"] - a["not_next"], abs=1e-7)

    # rank mode: every candidate's rank in A and in B, and its P(IsNext) change
    candidates = [B, "paris is the capital of france .", "she likes green tea ."]
    assert main(["nsp", "--model", first, A, *candidates, "--compare", second, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ranks_a = {r["sentence_b"]: (i, r["is_next"]) for i, r in enumerate(out["result"], start=1)}
    ranks_b = {r["sentence_b"]: (i, r["is_next"]) for i, r in enumerate(out["compare"]["result"], start=1)}
    assert set(ranks_a) == set(ranks_b) == set(candidates)
    diff = out["compare"]["differences"]
    assert diff["top_a"] == out["result"][0]["sentence_b"]
    assert diff["top_b"] == out["compare"]["result"][0]["sentence_b"]
    for d in diff["deltas"]:
        assert (d["rank_a"], d["rank_b"]) == (ranks_a[d["label"]][0], ranks_b[d["label"]][0])
        assert d["delta"] == pytest.approx(ranks_b[d["label"]][1] - ranks_a[d["label"]][1], abs=1e-7)

    # text output names both models and the differences; a second model without the head is refused
    assert main(["nsp", "--model", first, A, *candidates, "--compare", second]) == 0
    text = capsys.readouterr().out
    assert f"A: {first}" in text and f"B: {second}" in text and "differences (B - A)" in text
    no_head = str(checkpoint_factory("bert", "QuestionAnswering"))
    assert main(["nsp", "--model", first, A, B, "--compare", no_head, "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "no trained next-sentence-prediction head" in captured.err
