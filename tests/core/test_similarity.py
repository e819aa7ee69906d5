"""Similarity equals sentence-transformers' definition (mean over the attention mask, cosine) on the
real all-MiniLM-L6-v2; every architecture loads as a plain encoder; the CLI keeps its contract."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.similarity import SimilarityInput, compare, run
from bertstudio.core.tasks.similarity.snippet import build as script
from bertstudio.core.tasks.spec import spec_for
from tests.conftest import run_cli

A = "A man is playing a guitar."
BS = ("A person plays an instrument.", "The stock market fell sharply today.", "Someone is playing music on stage.")
ARCHITECTURES = ("bert", "distilbert", "roberta", "albert", "electra")


@cache
def _reference_model(folder: str):  # noqa: ANN202
    """transformers' own tokenizer and AutoModel for `folder`, loaded once (read only, eval mode)."""
    import transformers

    return transformers.AutoTokenizer.from_pretrained(folder), transformers.AutoModel.from_pretrained(folder).eval()


def _by_hand(folder, texts, pooling: str = "mean") -> list[float]:
    """sentence-transformers' Pooling(mean) + cosine, one sentence at a time (no padding at all)."""
    import torch

    tokenizer, model = _reference_model(str(folder))
    embeddings = []
    with torch.no_grad():
        for text in texts:
            encoding = tokenizer(text, return_tensors="pt")
            hidden = model(**encoding).last_hidden_state[0]
            embeddings.append(hidden[0] if pooling == "cls" else hidden.mean(dim=0))
    a, *bs = embeddings
    return [float(torch.nn.functional.cosine_similarity(a, b, dim=0)) for b in bs]


@pytest.mark.slow
def test_equals_sentence_transformers_definition_on_minilm(real_models) -> None:
    folder = real_models["all-minilm-l6-v2"]
    loaded = load_model(LoadRequest(str(folder), "similarity"))
    assert loaded.info.head_report.complete  # AutoModel: nothing newly initialised, no warning
    result = run(loaded, SimilarityInput(A, BS), TaskControl())
    assert [s.text for s in result.scores] == list(BS)  # the order given
    assert [s.score for s in result.scores] == pytest.approx(_by_hand(folder, [A, *BS]), abs=1e-5)
    # the model is made for this: the paraphrases beat the unrelated sentence
    by_text = {s.text: s.score for s in result.scores}
    assert by_text[BS[0]] > 0.5 and by_text[BS[1]] < 0.2
    assert result.ranked[-1].text == BS[1]
    matrix = result.matrix
    assert len(matrix) == 4 and all(len(row) == 4 for row in matrix)
    assert all(matrix[i][i] == pytest.approx(1.0, abs=1e-5) for i in range(4))
    assert matrix[1][2] == pytest.approx(matrix[2][1]) and matrix[0][1:] == pytest.approx(list(by_text.values()))
    cls = run(loaded, SimilarityInput(A, BS, "cls"), TaskControl())
    assert [s.score for s in cls.scores] == pytest.approx(_by_hand(folder, [A, *BS], "cls"), abs=1e-5)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_every_architecture_as_a_plain_encoder(checkpoint_factory, arch: str) -> None:
    folder = checkpoint_factory(arch, "MaskedLM")  # no pooler saved: ignored, not reported as a missing head
    loaded = load_model(LoadRequest(str(folder), "similarity"))
    assert loaded.info.head_report.complete, loaded.info.head_report
    texts = ("the cat sat on the mat .", "the dog ran fast .", "paris is the capital city of france .")
    for pooling in ("mean", "cls"):
        result = run(loaded, SimilarityInput(texts[0], texts[1:], pooling), TaskControl())
        assert result.pooling == pooling
        assert [s.score for s in result.scores] == pytest.approx(_by_hand(folder, texts, pooling), abs=1e-4)
        assert all(-1.0 <= s.score <= 1.0 for s in result.scores)


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (SimilarityInput("", ("b",)), "sentence A is empty"),
        (SimilarityInput("a", ()), "no sentences B"),
        (SimilarityInput("a", ("  ", "")), "no sentences B"),
        (SimilarityInput("a", ("b",), "max"), "Unknown pooling"),
        (SimilarityInput("a", ("b",) * 201), "too many"),
    ],
)
def test_bad_input_is_refused_before_the_model_runs(checkpoint_factory, inputs, message) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "Model")), "similarity"))
    with pytest.raises(InputError, match=message):
        run(loaded, inputs, TaskControl())


def test_long_sentence_is_cut_and_said(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "Model")), "similarity"))
    long = " ".join(["the cat sat on the mat"] * 30)  # the tiny tokenizer reads 64 tokens
    result = run(loaded, SimilarityInput("the dog", (long, "the cat")), TaskControl())
    assert [n.level for n in result.notes] == ["warning"] and "were cut" in result.notes[0].text
    assert result.to_json()["notes"][0]["text"] == result.notes[0].text
    assert run(loaded, SimilarityInput("the dog", ("the cat",)), TaskControl()).notes == ()


def test_compare_two_models(checkpoint_factory) -> None:
    one = load_model(LoadRequest(str(checkpoint_factory("bert", "Model")), "similarity"))
    two = load_model(LoadRequest(str(checkpoint_factory("roberta", "MaskedLM")), "similarity"))
    inputs = SimilarityInput("the cat sat .", ("the dog ran .", "paris is a city .", "the cat sat on the mat ."))
    a, b = run(one, inputs, TaskControl()), run(two, inputs, TaskControl())
    diff = compare(a, b)
    assert diff.top_a == a.ranked[0].text and diff.top_b == b.ranked[0].text
    assert {d.label for d in diff.deltas} == set(inputs.bs)
    delta = {d.label: d.delta for d in diff.deltas}
    assert all(delta[s.text] == pytest.approx(t.score - s.score) for s, t in zip(a.scores, b.scores, strict=True))


def test_script_reproduces_the_numbers(checkpoint_factory, tmp_path) -> None:
    """Copy as Python: the generated script prints the cosines the task computed, and user text
    (quotes, newlines, a would-be comment) stays inside its literals."""
    folder = checkpoint_factory("bert", "Model")
    tricky = "the cat ' \" sat\n# print('owned')"
    inputs = SimilarityInput("the dog ran .", (tricky, "paris is a city ."), "mean")
    expected = run(load_model(LoadRequest(str(folder), "similarity")), inputs, TaskControl())
    text = spec_for("similarity").script(str(folder), inputs)
    assert "owned')\n" not in text.replace("\\n", "")  # never a line of its own
    path = tmp_path / "similarity_script.py"
    path.write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr
    printed = [float(line.split("\t")[0]) for line in done.stdout.splitlines() if "\t" in line]
    assert printed == pytest.approx([s.score for s in expected.scores], abs=1e-5)
    assert "owned" not in done.stdout.split("\t")[0]
    assert script(str(folder), {"a": "x", "bs": "y\nz", "pooling": "cls"}).count("hidden[:, 0]") == 1


@pytest.mark.slow
def test_cli_json_contract(real_models, capfd) -> None:  # noqa: ANN001
    folder = str(real_models["all-minilm-l6-v2"])
    done = run_cli(capfd, "similarity", "--model", folder, A, *BS, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["pooling"] == "mean"
    assert [row["text"] for row in result["scores"]] == list(BS)
    assert [row["score"] for row in result["scores"]] == pytest.approx(_by_hand(folder, [A, *BS]), abs=1e-5)
    cls = json.loads(run_cli(capfd, "similarity", "--model", folder, "--pooling", "cls", A, BS[0], "--json").stdout)
    assert cls["pooling"] == "cls" and len(cls["scores"]) == 1


def test_cli_errors_exit_one_without_traceback(checkpoint_factory, capfd) -> None:  # noqa: ANN001
    folder = str(checkpoint_factory("bert", "Model"))
    assert run_cli(capfd, "similarity", "--model", folder, "", "b").returncode == 1
    done = run_cli(capfd, "similarity", "--model", folder, "a", "   ")
    assert done.returncode == 1 and "Traceback" not in done.stderr and "no sentences B" in done.stderr


def test_explain_attributes_the_cosine_to_the_tokens_of_a(checkpoint_factory) -> None:
    """F is the task's own cosine; Integrated Gradients is complete over A's tokens; B is held fixed."""
    import torch

    from bertstudio.core.explain.attribution import explain
    from bertstudio.core.explain.targets import prepare

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "Model")), "similarity"))
    a, b = "the cat sat on the mat .", "the dog ran fast ."
    ran = run(loaded, SimilarityInput(a, (b,)), TaskControl())
    result = explain(loaded, "similarity", (a, b), steps=200)
    assert result.tokens == tuple(loaded.tokenizer.convert_ids_to_tokens(loaded.tokenizer(a)["input_ids"]))
    assert len(result.attributions) == len(result.tokens)  # one value per token of A, none for B
    assert result.score == pytest.approx(ran.scores[0].score, abs=1e-5)
    assert sum(result.attributions) == pytest.approx(result.score - result.baseline_score, abs=0.02)
    cls = explain(loaded, "similarity", (a, b), "grad-x-input", target="cls")
    assert cls.target == "cls" and cls.score == pytest.approx(
        run(loaded, SimilarityInput(a, (b,), "cls"), TaskControl()).scores[0].score, abs=1e-5)
    prepared = prepare(loaded, "similarity", (a, b))
    with torch.enable_grad():
        embeds = loaded.model.get_input_embeddings()(prepared.inputs["input_ids"]).detach().requires_grad_()
        rest = {k: v for k, v in prepared.inputs.items() if k != "input_ids"}
        prepared.probability(loaded.model(inputs_embeds=embeds, **rest)).sum().backward()
    assert embeds.grad is not None and float(embeds.grad.abs().sum()) > 0
    with pytest.raises(InputError, match="Unknown similarity target"):
        explain(loaded, "similarity", (a, b), target="max")
    with pytest.raises(InputError, match="sentence B is empty"):
        explain(loaded, "similarity", (a, " "))


@pytest.mark.slow
def test_explain_cli_on_minilm(real_models, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, "explain", "--task", "similarity", "--model", str(real_models["all-minilm-l6-v2"]), A, BS[0],
                   "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["tokens"][:3] == ["[CLS]", "a", "man"] and len(result["attributions"]) == len(result["tokens"])
    assert result["score"] == pytest.approx(_by_hand(real_models["all-minilm-l6-v2"], [A, BS[0]])[0], abs=1e-5)
    top = max(range(len(result["tokens"])), key=lambda i: result["attributions"][i])
    assert result["tokens"][top] in {"guitar", "playing"}  # the words the paraphrase shares in meaning
    wrong = run_cli(capfd, "explain", "--task", "similarity", "--model", str(real_models["all-minilm-l6-v2"]), A)
    assert wrong.returncode == 1 and "two sentences" in wrong.stderr and "Traceback" not in wrong.stderr


STS = [  # sentence1, sentence2, gold (0-5, as STS-B)
    ("A man is playing a guitar.", "A person plays an instrument.", 4.2),
    ("A man is playing a guitar.", "The stock market fell sharply today.", 0.1),
    ("A woman is slicing an onion.", "Someone is cutting a vegetable.", 4.0),
    ("A woman is slicing an onion.", "A man is driving a car.", 0.4),
    ("The cat sleeps on the sofa.", "A cat is napping on a couch.", 4.8),
    ("The cat sleeps on the sofa.", "Stocks rallied after the report.", 0.0),
    ("Two kids play football in the park.", "Children are playing soccer outside.", 4.5),
    ("Two kids play football in the park.", "A chef cooks pasta.", 0.2),
]


def _sts_file(tmp_path, suffix: str = ".tsv"):
    path = tmp_path / f"sts{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps({"sentence1": a, "sentence2": b, "score": s}) + "\n" for a, b, s in STS),
                        encoding="utf-8")
    else:
        sep = "\t" if suffix == ".tsv" else ","
        path.write_text("sentence1\tsentence2\tscore\n".replace("\t", sep)
                        + "".join(f"{a}{sep}{b}{sep}{s}\n" for a, b, s in STS), encoding="utf-8")
    return path


@pytest.mark.slow
def test_evaluate_correlations_and_errors_by_rank_difference(real_models, tmp_path) -> None:
    from scipy.stats import pearsonr, rankdata, spearmanr

    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.readers import read_dataset

    folder = real_models["all-minilm-l6-v2"]
    loaded = load_model(LoadRequest(str(folder), "similarity"))
    cosines = [_by_hand(folder, [a, b])[0] for a, b, _ in STS]
    golds = [s for _, _, s in STS]
    for suffix in (".tsv", ".csv", ".jsonl"):
        result = evaluate(loaded, read_dataset("similarity", _sts_file(tmp_path, suffix)))
        assert result.metrics["spearman"] == pytest.approx(spearmanr(golds, cosines).statistic, abs=1e-6)
        assert result.metrics["pearson"] == pytest.approx(pearsonr(golds, cosines).statistic, abs=1e-5)
        assert [r.score for r in result.rows] == pytest.approx(cosines, abs=1e-5)
    differences = abs(rankdata(cosines) - rankdata(golds))
    errors = result.errors
    assert [e.row for e in errors] == sorted((i for i in range(len(STS)) if differences[i] > 0),
                                             key=lambda i: (-differences[i], i))
    assert len(errors) >= 2  # the fixture's ranks are not all equal: the order is tested
    data = result.to_json()
    assert set(data["metrics"]) >= {"spearman", "pearson"} and -1 <= data["metrics"]["spearman"] <= 1
    assert [e["row"] for e in data["errors"]] == [e.row for e in errors]


def test_evaluate_reader_refuses_bad_rows(tmp_path) -> None:
    from bertstudio.core.evaluate.readers import read_dataset

    bad = tmp_path / "bad.csv"
    bad.write_text("sentence1,sentence2,score\na,b,high\nc,,1\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_dataset("similarity", bad)
    assert "line 2: score 'high' is not a number" in caught.value.message
    assert "line 3: empty sentence1 or sentence2" in caught.value.message
    missing = tmp_path / "missing.csv"
    missing.write_text("text_a,text_b\na,b\n", encoding="utf-8")
    with pytest.raises(InputError, match="no score column"):
        read_dataset("similarity", missing)


@pytest.mark.slow
def test_evaluate_cli(real_models, tmp_path, capfd) -> None:  # noqa: ANN001
    done = run_cli(capfd, "evaluate", "--task", "similarity", "--model", str(real_models["all-minilm-l6-v2"]),
                   "--data", str(_sts_file(tmp_path)), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["task"] == "similarity" and result["n"] == len(STS)
    assert result["metrics"]["spearman"] > 0.7 and result["metrics"]["pearson"] > 0.7


def test_evaluate_says_when_sentences_were_cut(checkpoint_factory, tmp_path) -> None:
    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.readers import read_dataset

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "Model")), "similarity"))
    long = " ".join(["the cat sat on the mat"] * 30)  # the tiny tokenizer reads 64 tokens
    data = tmp_path / "cut.tsv"
    data.write_text(f"sentence1\tsentence2\tscore\nthe cat\t{long}\t1\nthe dog\tthe cat\t2\n", encoding="utf-8")
    result = evaluate(loaded, read_dataset("similarity", data))
    assert [n.text for n in result.notes if "were cut" in n.text] == [
        "1 sentence(s) were longer than the 64 tokens the model reads and were cut; their embeddings cover the "
        "first part only."]
    assert set(result.metrics) == {"spearman", "pearson", "mean_rank_difference"}
