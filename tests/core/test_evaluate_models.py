"""Evaluation with real models: trained MiniLM heads on held-out files (numbers within a band),
metrics equal to the reference libraries on the same predictions, predictions equal to the task
code one row at a time, compare with McNemar, the CLI contract, one load per model, cancel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bertstudio.core.errors import InputError, TaskCancelled
from bertstudio.core.evaluate.evaluation import EvalRequest, evaluate, evaluate_job
from bertstudio.core.evaluate.readers import EvalColumns, read_dataset
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.qa import squad
from tests.fixtures.trained_nsp_ner import trained_ner, trained_nsp
from tests.fixtures.trained_sentiment import trained_sentiment

DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate"


def _run(model: Path | str, task: str, data: str, compare: str | None = None, **request: object):  # noqa: ANN202
    return evaluate_job(LoadRequest(str(model), task), EvalRequest(str(DATA / data), **request), TaskControl(),
                        str(compare) if compare else None)


@pytest.fixture(scope="module")
def sentiment(real_models) -> Path:  # noqa: ANN001
    return trained_sentiment(real_models["all-minilm-l6-v2"])


def test_trained_sentiment_classifier_on_held_out_reviews(sentiment: Path) -> None:
    from sklearn.metrics import confusion_matrix, f1_score

    result = _run(sentiment, "classification", "sentiment_heldout.csv")
    assert result.n == 16 and 0.85 <= result.metrics["accuracy"] <= 1.0
    golds = [x.gold for x in read_dataset("classification", DATA / "sentiment_heldout.csv").examples]
    predictions = list(result.predictions)
    assert result.metrics["macro_f1"] == pytest.approx(f1_score(golds, predictions, average="macro"))
    assert result.confusion.labels == ("negative", "positive")
    assert [list(r) for r in result.confusion.matrix] == confusion_matrix(golds, predictions, labels=[
        "negative", "positive"]).tolist()
    domains = {s.value: s.n for s in result.slices if s.by == "column:domain"}
    assert domains == {"music": 4, "shopping": 4, "food": 4, "travel": 4}


def test_topic_classifier_metrics_errors_and_cells_equal_scikit_learn(real_models) -> None:  # noqa: ANN001
    from sklearn.metrics import accuracy_score, precision_recall_fscore_support

    from bertstudio.core.tasks.classification import classify

    folder = real_models["categorium-bert-tiny-topics-en"]
    result = _run(folder, "classification", "topics.csv")
    examples = read_dataset("classification", DATA / "topics.csv").examples
    golds, predictions = [x.gold for x in examples], list(result.predictions)
    loaded = load_model(LoadRequest(str(folder), "classification"))
    assert predictions == [classify(loaded, x.inputs[0]).first.top.label for x in examples]  # the task's path
    assert 0.1 <= result.metrics["accuracy"] <= 0.4  # a tiny 27-topic model: weak, but far above 1/27
    assert result.metrics["accuracy"] == accuracy_score(golds, predictions)
    labels = list(result.confusion.labels)
    p, r, f, s = precision_recall_fscore_support(golds, predictions, labels=labels, zero_division=0)
    assert [result.per_label[k].precision for k in labels] == pytest.approx(list(p))
    assert result.metrics["macro_f1"] == pytest.approx(f.mean())
    errors = result.errors
    assert errors and all(examples[e.row].gold == e.gold and predictions[e.row] == e.prediction for e in errors)
    gold, predicted = errors[0].gold, errors[0].prediction
    count = result.confusion.matrix[labels.index(gold)][labels.index(predicted)]
    assert len(result.rows_of(gold, predicted)) == count


def test_trained_ner_on_held_out_conll_equals_seqeval(real_models) -> None:  # noqa: ANN001
    from seqeval.metrics import f1_score, precision_score
    from seqeval.scheme import IOB2

    result = _run(trained_ner(real_models["all-minilm-l6-v2"]), "ner", "ner_heldout.conll")
    golds = [list(x.gold) for x in read_dataset("ner", DATA / "ner_heldout.conll").examples]
    predictions = [list(p) for p in result.predictions]
    assert result.metrics["f1"] == pytest.approx(f1_score(golds, predictions, mode="strict", scheme=IOB2))
    assert result.metrics["precision"] == pytest.approx(precision_score(golds, predictions, mode="strict", scheme=IOB2))
    assert 0.75 <= result.metrics["f1"] <= 1.0
    assert result.per_label["LOC"].f1 >= 0.9 and result.per_label["PER"].support == 11
    assert set(result.to_json()["per_type"]) == {"LOC", "PER"}


def test_trained_qa_on_squad_json_equals_the_squad_functions(real_models) -> None:  # noqa: ANN001
    from tests.fixtures.trained_qa import trained_qa_folder

    folder = trained_qa_folder(real_models["all-minilm-l6-v2"])
    result = _run(folder, "qa", "qa_squad.json")
    examples = read_dataset("qa", DATA / "qa_squad.json").examples
    expected = squad.squad_scores([x.gold for x in examples], list(result.predictions))
    assert result.metrics["exact_match"] == pytest.approx(expected["exact_match"])
    assert result.metrics["f1"] == pytest.approx(expected["f1"])
    assert 0.7 <= result.metrics["exact_match"] <= 1.0 and result.metrics["has_answer_total"] == 7
    assert any("no answer" in n.text for n in result.notes)


def test_nsp_batched_equals_the_task_one_pair_at_a_time(real_models) -> None:  # noqa: ANN001
    from sklearn.metrics import accuracy_score

    from bertstudio.core.tasks.nsp import predict

    folder = trained_nsp(real_models["all-minilm-l6-v2"])
    result = _run(folder, "nsp", "nsp_pairs.csv")
    loaded = load_model(LoadRequest(str(folder), "nsp"))
    examples = read_dataset("nsp", DATA / "nsp_pairs.csv").examples
    one_by_one = ["IsNext" if predict(loaded, *x.inputs).is_next >= 0.5 else "NotNext" for x in examples]
    assert list(result.predictions) == one_by_one
    assert result.metrics["accuracy"] == accuracy_score([x.gold for x in examples], one_by_one)


def test_masked_lm_reproducible_with_its_seed(real_models) -> None:  # noqa: ANN001
    folder = real_models["rxnmapper-albert-smiles-mlm"]
    first = _run(folder, "fill-mask", "smiles.txt")
    again = _run(folder, "fill-mask", "smiles.txt")
    assert first.metrics == pytest.approx(again.metrics)
    assert 0.5 <= first.metrics["top1_accuracy"] <= first.metrics["top5_accuracy"] <= 1.0
    assert 1.0 <= first.metrics["pseudo_perplexity"] < 10.0
    from bertstudio.core.evaluate.predict import EvalOptions

    other = _run(folder, "fill-mask", "smiles.txt", options=EvalOptions(seed=7))
    assert [r.gold for r in other.rows] != [r.gold for r in first.rows]


def test_choice_with_an_untrained_head_says_so(real_models) -> None:  # noqa: ANN001
    from bertstudio.core.tasks.multiple_choice import predict

    folder = real_models["all-minilm-l6-v2"]
    result = _run(folder, "multiple-choice", "choice.csv")
    loaded = load_model(LoadRequest(str(folder), "multiple-choice"))
    examples = read_dataset("multiple-choice", DATA / "choice.csv").examples
    assert list(result.predictions) == [predict(loaded, *x.inputs).best.index for x in examples]
    assert any("no trained multiple-choice head" in n.text for n in result.notes)


def test_compare_two_models_mcnemar_and_disagreements(sentiment: Path, checkpoint_factory) -> None:  # noqa: ANN001
    from scipy.stats import binomtest

    random_head = checkpoint_factory("bert", "SequenceClassification")  # labels negative / positive, untrained
    both = _run(sentiment, "classification", "sentiment_heldout.csv", compare=random_head)
    a_right = [r.correct for r in both.a.rows]
    b_right = [r.correct for r in both.b.rows]
    a_only = sum(a and not b for a, b in zip(a_right, b_right, strict=True))
    b_only = sum(b and not a for a, b in zip(a_right, b_right, strict=True))
    assert (both.mcnemar.a_only, both.mcnemar.b_only) == (a_only, b_only) and a_only > b_only
    assert both.mcnemar.p_exact == pytest.approx(binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue)
    assert [d.row for d in both.disagreements] == [
        i for i in range(16) if both.a.rows[i].prediction != both.b.rows[i].prediction]
    data = both.to_json()
    assert data["compare"]["mcnemar_p"] == both.mcnemar.p_exact and "disagreements" in data["compare"]


def test_each_model_loaded_once_and_unknown_labels_named(sentiment: Path, real_models, monkeypatch) -> None:  # noqa: ANN001
    from bertstudio.core import models

    loads: list[str] = []
    real = models.load_uncached
    monkeypatch.setattr(models, "load_uncached", lambda request, control=None: loads.append(request.source) or real(
        request, control))
    models.MODEL_CACHE.clear()
    _run(sentiment, "classification", "sentiment_heldout.csv", limit=4)
    _run(sentiment, "classification", "sentiment_heldout.csv", limit=5)
    assert loads == [str(sentiment)]
    with pytest.raises(InputError, match=r"Line 2 has the label 'music'.*does not know"):
        _run(sentiment, "classification", "sentiment_heldout.csv", columns=EvalColumns(label="domain"))
    untrained = load_model(LoadRequest(str(real_models["all-minilm-l6-v2"]), "ner"))  # labels LABEL_0, LABEL_1
    with pytest.raises(InputError, match=r"Line 4 has the tag 'B-PER': the model knows no entity type 'PER'"):
        evaluate(untrained, read_dataset("ner", DATA / "ner_heldout.conll"))


def test_cancel_stops_between_batches(sentiment: Path) -> None:
    loaded = load_model(LoadRequest(str(sentiment), "classification"))
    dataset = read_dataset("classification", DATA / "sentiment_heldout.csv")
    seen: list[float | None] = []
    control = TaskControl(on_progress=lambda event: (seen.append(event.fraction), control.request_stop()))
    from bertstudio.core.evaluate.predict import EvalOptions

    with pytest.raises(TaskCancelled):
        evaluate(loaded, dataset, control, EvalOptions(batch_size=4))
    assert seen == [0.25]  # stopped after the first batch of four rows


# -- the CLI contract -------------------------------------------------------------------------------
def _cli(capsys, *argv: str) -> tuple[int, dict, str]:  # noqa: ANN001
    from bertstudio.cli import main

    code = main(["evaluate", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and out.strip().startswith("{") else {}), err


def test_cli_json_contract_for_classify_ner_qa(capsys, sentiment: Path, real_models) -> None:  # noqa: ANN001
    code, data, _ = _cli(capsys, "--model", str(sentiment), "--task", "classify", "--data",
                         str(DATA / "sentiment_heldout.csv"), "--limit", "6", "--json")
    assert code == 0 and data["n"] == 6
    assert {"accuracy", "macro_f1"} <= set(data["metrics"])
    assert set(data["per_class"]["positive"]) == {"precision", "recall", "f1", "support"}
    assert set(data["confusion"]) == {"labels", "matrix"} and len(data["confusion"]["matrix"]) == len(
        data["confusion"]["labels"])
    assert all({"row", "gold", "prediction", "score"} <= set(e) for e in data["errors"])
    code, data, _ = _cli(capsys, "--model", str(trained_ner(real_models["all-minilm-l6-v2"])), "--task", "ner",
                         "--data", str(DATA / "ner_heldout.conll"), "--json")
    assert code == 0 and {"precision", "recall", "f1"} <= set(data["metrics"]) and "PER" in data["per_type"]
    assert data["errors"] and all(isinstance(e["row"], int) for e in data["errors"])
    code, data, _ = _cli(capsys, "--model", str(real_models["categorium-bert-tiny-topics-en"]), "--task", "classify",
                         "--data", str(DATA / "topics.csv"), "--compare", str(real_models[
                             "categorium-bert-tiny-topics-en"]), "--json")
    assert code == 0 and data["compare"]["disagreements"] == [] and data["compare"]["mcnemar_p"] == 1.0
    assert data["compare"]["metrics"]["accuracy"] == data["metrics"]["accuracy"]


def test_cli_bad_input_exits_1_with_one_message(capsys, tmp_path: Path, sentiment: Path) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.csv"
    bad.write_text("text,label\ngood,positive\n,negative\n", encoding="utf-8")
    code, _, err = _cli(capsys, "--model", str(sentiment), "--task", "classify", "--data", str(bad), "--json")
    assert code == 1 and "line 3: empty text" in err and "Traceback" not in err
    code, _, err = _cli(capsys, "--model", str(sentiment), "--task", "classify", "--data",
                        str(DATA / "nsp_pairs.csv"))
    assert code == 1 and "has the label '0', which the model does not know" in err
    code, _, err = _cli(capsys, "--model", str(sentiment), "--task", "classify", "--data",
                        str(DATA / "topics.csv"), "--limit", "0")
    assert code == 1 and "--limit" in err


def test_projector_vectors_and_pca_equal_scikit_learn(real_models) -> None:  # noqa: ANN001
    import numpy as np
    from sklearn.decomposition import PCA

    from bertstudio.core.evaluate.projector import embed, methods, projection

    loaded = load_model(LoadRequest(str(real_models["categorium-bert-tiny-topics-en"]), "classification"))
    dataset = read_dataset("classification", DATA / "topics.csv")
    vectors = embed(loaded, dataset, layer=1, pooling="mean")
    assert vectors.shape == (16, loaded.info.hidden_size)
    import torch

    with torch.inference_mode():  # the first row by hand: mean of layer 1 over its tokens
        encoding = loaded.tokenizer(dataset.examples[0].inputs[0], return_tensors="pt")
        states = loaded.model.base_model(**encoding, output_hidden_states=True).hidden_states[1][0]
    assert np.allclose(vectors[0], states.mean(0).numpy(), atol=1e-5)
    shown = projection(loaded, dataset, layer=1, pooling="mean")
    expected = PCA(n_components=2, random_state=0).fit_transform(vectors)
    assert np.allclose(np.abs(shown.points), np.abs(expected), atol=1e-3) and shown.layer == 1
    assert 0 < sum(shown.explained) <= 1.0 and "pca" in methods()
    with pytest.raises(InputError, match="Layer 9 does not exist"):
        embed(loaded, dataset, layer=9)


def test_rows_open_as_their_task_input_and_headers_read_cheaply() -> None:
    from bertstudio.core.datafiles import first_line_header as header_of
    from bertstudio.core.evaluate.rows import row_inputs

    qa = read_dataset("qa", DATA / "qa.csv").examples[0]
    assert row_inputs("qa", qa).question == "Where was Ingrid born?"
    choice = read_dataset("multiple-choice", DATA / "choice.csv").examples[0]
    assert row_inputs("multiple-choice", choice).choices == ("eats its food.", "flies to the moon.", "writes a letter.")
    ner = read_dataset("ner", DATA / "ner_heldout.conll").examples[1]
    assert row_inputs("ner", ner).text == "Olivia was born in Lisbon ."
    nsp = read_dataset("nsp", DATA / "nsp_pairs.csv").examples[0]
    assert row_inputs("nsp", nsp).candidates == ("He kneaded the dough and let it rise for an hour.",)
    assert header_of(DATA / "choice.csv") == ["prompt", "ending0", "ending1", "ending2", "label", "source"]
    assert header_of(DATA / "ner_heldout.conll") == []


def test_rows_longer_than_the_model_are_cut_and_named(real_models, tmp_path: Path) -> None:  # noqa: ANN001
    table = tmp_path / "long.csv"
    table.write_text("text,label\n" + "pasta " * 700 + ",food\nshort pasta recipe,food\n", encoding="utf-8")
    loaded = load_model(LoadRequest(str(real_models["categorium-bert-tiny-topics-en"]), "classification"))
    result = evaluate(loaded, read_dataset("classification", table))
    assert result.n == 2 and [n.text for n in result.notes] == [
        "1 row(s) were longer than the 512 tokens the model reads and were cut (lines 2)."]
