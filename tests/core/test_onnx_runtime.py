"""ONNX Runtime as a runtime (issue 39.6): an exported model (its .onnx file, or a folder holding one
beside the tokenizer) runs through the batch engine and gives PyTorch's predictions (equal argmax,
probabilities within 1e-3), on a tiny checkpoint and on the real MiniLM sentiment classifier; the
CLI's `--runtime onnx` and every refusal say what to do in one line."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate.evaluation import evaluate
from bertstudio.core.evaluate.readers import EvalColumns, read_dataset
from bertstudio.core.export.onnx import export_onnx
from bertstudio.core.export.onnx_runtime import find_onnx, has_export
from bertstudio.core.jobs import run_spec
from bertstudio.core.models import LoadRequest, load_uncached
from bertstudio.core.progress import ProgressEvent, TaskControl
from bertstudio.core.tasks.classification import ClassificationInput, classify_batch
from bertstudio.core.tasks.spec import spec_for
from tests.conftest import run_cli

TEXTS = ["the cat sat on the mat", "paris", "a long sentence about a dog that ran across the park and back again",
         "she read the book", "ok then", "the weather is fine today and tomorrow", "no", "a b c d e f g"]


@pytest.fixture(scope="module")
def exported(checkpoint_factory, tmp_path_factory) -> Path:  # noqa: ANN001
    """A tiny BERT classifier's folder with its model.onnx beside the tokenizer."""
    folder = tmp_path_factory.mktemp("onnx") / "model"
    shutil.copytree(checkpoint_factory("bert", "SequenceClassification"), folder)
    export_onnx(str(folder), "classification", folder / "model.onnx", speed=False)
    return folder


def labelled_file(folder: Path, texts: list[str]) -> Path:
    path = folder / "rows.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows((text, ("negative", "positive")[i % 2]) for i, text in enumerate(texts))
    return path


def assert_same_predictions(a, b) -> None:  # noqa: ANN001
    assert [r.prediction for r in a.rows] == [r.prediction for r in b.rows]
    assert np.abs(a.probabilities - b.probabilities).max() <= 1e-3
    assert a.metrics == pytest.approx(b.metrics)


def test_evaluate_on_onnx_runtime_equals_pytorch_in_batches(exported: Path, tmp_path: Path) -> None:
    data = labelled_file(tmp_path, TEXTS * 5)
    dataset = read_dataset("classification", str(data), EvalColumns())
    torch_model = load_uncached(LoadRequest(str(exported), "classification"))
    onnx_model = load_uncached(LoadRequest(str(exported), "classification", runtime="onnx"))
    assert onnx_model.info.architecture == "BertForSequenceClassification (ONNX Runtime)"
    assert onnx_model.info.id2label == torch_model.info.id2label
    events: list[ProgressEvent] = []
    from bertstudio.core.evaluate.predict import EvalOptions

    onnx_result = evaluate(onnx_model, dataset, TaskControl(on_progress=events.append), EvalOptions(batch_size=4))
    assert_same_predictions(evaluate(torch_model, dataset), onnx_result)
    scored = [e.message for e in events if e.message.startswith("Classified")]
    assert len(scored) == 10 and scored[-1] == "Classified 40 of 40 rows"  # progress (and Cancel) per batch of 4


def test_the_file_itself_and_a_cancel_between_batches(exported: Path) -> None:
    loaded = load_uncached(LoadRequest(str(exported / "model.onnx"), "classification", runtime="onnx"))
    want = classify_batch(load_uncached(LoadRequest(str(exported), "classification")), TEXTS)
    got = classify_batch(loaded, TEXTS)
    assert [r.top.label for r in got.rows] == [r.top.label for r in want.rows]
    from bertstudio.core.errors import TaskCancelled

    seen: list[str] = []

    def stop_after_first_batch(event: ProgressEvent) -> None:
        seen.append(event.message)
        if event.message.startswith("Classified"):
            control.request_stop()

    control = TaskControl(on_progress=stop_after_first_batch)
    with pytest.raises(TaskCancelled):
        classify_batch(loaded, TEXTS * 20, control, batch_size=2)
    assert [m for m in seen if m.startswith("Classified")] == ["Classified 2 of 160 rows"]


def test_real_minilm_classifier_agrees_with_pytorch(real_models, tmp_path: Path) -> None:  # noqa: ANN001
    from tests.fixtures.trained_sentiment import HELD_OUT, trained_sentiment

    source = trained_sentiment(real_models["all-minilm-l6-v2"])
    export_onnx(str(source), "classification", tmp_path / "sentiment.onnx", speed=False)  # beside nothing:
    texts = [text for text, _, _ in HELD_OUT]  # the tokenizer comes from the folder the export recorded
    dataset = read_dataset("classification", str(labelled_file(tmp_path, texts * 4)), EvalColumns())
    a = evaluate(load_uncached(LoadRequest(str(source), "classification")), dataset)
    b = evaluate(load_uncached(LoadRequest(str(tmp_path / "sentiment.onnx"), "classification", runtime="onnx")),
                 dataset)
    assert_same_predictions(a, b)
    assert [r.prediction for r in b.rows[:5]] == [label for _, label, _ in HELD_OUT]


def test_one_text_on_onnx_runtime_equals_pytorch(exported: Path) -> None:
    spec = spec_for("classification")
    scores = []
    for runtime in ("torch", "onnx"):
        outcome = run_spec(spec, LoadRequest(str(exported), "classification", runtime=runtime),
                           ClassificationInput("the cat sat on the mat", "a dog"), TaskControl())
        scores.append({s.label: s.score for s in outcome.result.first.scores})
    assert scores[0].keys() == scores[1].keys()
    assert max(abs(scores[0][k] - scores[1][k]) for k in scores[0]) <= 1e-3


@pytest.mark.parametrize(("task", "head"), [("ner", "TokenClassification"), ("nsp", "NextSentencePrediction")])
def test_ner_and_nsp_on_onnx_runtime_equal_pytorch(task: str, head: str, checkpoint_factory, tmp_path: Path,
                                                   capfd) -> None:  # noqa: ANN001
    from bertstudio.core.tasks.ner import NerInput
    from bertstudio.core.tasks.nsp import NspInput

    folder = tmp_path / "model"
    shutil.copytree(checkpoint_factory("bert", head), folder)
    export_onnx(str(folder), task, folder / "model.onnx", speed=False)
    given = NerInput("Ada Lovelace lives in Paris") if task == "ner" else NspInput("The cat sat.", ("It slept.", "x"))
    found = [run_spec(spec_for(task), LoadRequest(str(folder), task, runtime=runtime), given, TaskControl()).result
             for runtime in ("torch", "onnx")]
    if task == "ner":
        assert [(e.label, e.start, e.end) for e in found[0].entities] == \
            [(e.label, e.start, e.end) for e in found[1].entities]
        assert max(abs(a.score - b.score) for a, b in zip(found[0].entities, found[1].entities, strict=True)) <= 1e-3
    else:
        assert [r.sentence_b for r in found[0].results] == [r.sentence_b for r in found[1].results]
        assert max(abs(a.is_next - b.is_next) for a, b in zip(found[0].results, found[1].results, strict=True)) <= 1e-3
    args = ["Ada lives in Paris"] if task == "ner" else ["The cat sat.", "It slept."]
    done = run_cli(capfd, spec_for(task).cli_name, "--model", str(folder), "--runtime", "onnx", *args)
    assert done.returncode == 0 and "not supported" not in done.stderr, done.stderr


def torch_ids():  # noqa: ANN201
    import torch

    return torch.tensor([[2, 5, 6, 3]])


def test_refusals_say_what_to_do(exported: Path, checkpoint_factory, tmp_path: Path) -> None:  # noqa: ANN001
    plain = checkpoint_factory("bert", "SequenceClassification")
    assert has_export(str(exported)) and not has_export(str(plain)) and not has_export("")
    cases = [
        (LoadRequest(str(plain), "classification", runtime="onnx"), "not an .onnx file or a folder holding one"),
        (LoadRequest(str(exported), "fill-mask", runtime="onnx"), "does not run on ONNX Runtime"),
        (LoadRequest(str(exported), "ner", runtime="onnx"), "holds a Classification head"),
        (LoadRequest(str(exported), "classification", quantize="int8", runtime="onnx"), "as it is, on the CPU"),
    ]
    for request, message in cases:
        with pytest.raises(InputError, match=message):
            load_uncached(request)
    two = tmp_path / "two"
    two.mkdir()
    for name in ("a.onnx", "b.onnx"):
        shutil.copy(exported / "model.onnx", two / name)
    with pytest.raises(InputError, match="holds 2 .onnx files"):
        find_onnx(two)
    loaded = load_uncached(LoadRequest(str(exported), "classification", runtime="onnx"))
    assert not hasattr(loaded.model, "get_input_embeddings")  # feature probes read it as absent ...
    with pytest.raises(InputError, match="needs the PyTorch model"):  # ... a use says what to do
        loaded.model.get_input_embeddings()
    with pytest.raises(InputError, match="takes no 'output_hidden_states'"):
        loaded.model(input_ids=torch_ids(), output_hidden_states=True)
    from bertstudio.core.explain.jobs import explain_job

    with pytest.raises(InputError, match="whole forwards only"):
        explain_job(LoadRequest(str(exported), "classification", runtime="onnx"), "classification", ("a text",),
                    "gradient", None, 8, False, TaskControl())
    with pytest.raises(InputError, match="PyTorch runtime only"):
        run_spec(spec_for("classification"), LoadRequest(str(exported), "classification", runtime="onnx"),
                 ClassificationInput("a text"), TaskControl(), ablate=((0, 0),))


def test_cli_runtime_onnx(exported: Path, tmp_path: Path, capfd) -> None:  # noqa: ANN001
    data = labelled_file(tmp_path, TEXTS)
    torch_run = run_cli(capfd, "evaluate", "--model", str(exported), "--data", str(data), "--json")
    onnx_run = run_cli(capfd, "evaluate", "--model", str(exported / "model.onnx"), "--runtime", "onnx",
                       "--data", str(data), "--json")
    assert onnx_run.returncode == 0, onnx_run.stderr
    a, b = json.loads(torch_run.stdout), json.loads(onnx_run.stdout)
    assert a["metrics"] == pytest.approx(b["metrics"])
    assert [(e["row"], e["prediction"]) for e in a["errors"]] == [(e["row"], e["prediction"]) for e in b["errors"]]
    one = run_cli(capfd, "classify", "--model", str(exported), "--runtime", "onnx", "a cat", "--json")
    assert one.returncode == 0 and {s["label"] for s in json.loads(one.stdout)} == {"negative", "positive"}
    refused = run_cli(capfd, "classify", "--model", str(tmp_path), "--runtime", "onnx", "a cat")
    assert refused.returncode == 1 and refused.stderr.startswith("error: ") and "Traceback" not in refused.stderr


def test_export_int8_runs_on_onnx_runtime(checkpoint_factory, tmp_path: Path, capfd) -> None:  # noqa: ANN001
    folder = tmp_path / "model"
    shutil.copytree(checkpoint_factory("bert", "SequenceClassification"), folder)
    done = run_cli(capfd, "export", "--model", str(folder), "--task", "classify", "--output",
                   str(folder / "model.onnx"), "--no-speed", "--int8")
    assert done.returncode == 0, done.stderr
    assert (folder / "model-int8.onnx").is_file() and not list(folder.glob("*.partial"))
    assert (folder / "model-int8.onnx").stat().st_size < (folder / "model.onnx").stat().st_size
    data = labelled_file(tmp_path, TEXTS)
    ran = run_cli(capfd, "evaluate", "--model", str(folder / "model-int8.onnx"), "--runtime", "onnx",
                  "--data", str(data), "--json")
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["n"] == len(TEXTS)
    again = run_cli(capfd, "export", "--model", str(folder), "--task", "classify", "--output",
                    str(tmp_path / "model.onnx"), "--no-speed", "--int8")
    assert again.returncode == 0  # another name: fine
    refused = run_cli(capfd, "export", "--model", str(folder), "--task", "classify", "--output",
                      str(tmp_path / "model.onnx"), "--no-speed", "--int8")
    assert refused.returncode == 1 and "exists already" in refused.stderr
