"""ONNX export (issue 33): onnxruntime's outputs equal PyTorch's to 1e-4 in float32 for every
architecture we build x classification, NER and QA heads (and masked LM, NSP, multiple choice where
the architecture has them), for inputs of several lengths and batch sizes; the file is atomic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from bertstudio.core.errors import InputError, TaskCancelled
from bertstudio.core.export.onnx import SHAPES, TOLERANCE, export_onnx, exportable_tasks
from bertstudio.core.export.ort_model import load_onnx
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import all_specs
from tests.fixtures.checkpoints import ARCHITECTURES

TEXTS = ("the cat sat on the mat", "paris is the capital city of france and anna lives there with her dog",
         "who", "john works in berlin but he was born in rome , italy")
PAIRS = ("where is the cat", "who lives in paris", "what", "where was john born")
# transformers class suffix -> the task key whose spec names that head's Auto class
HEAD_TASK = {suffix: key for key, spec in all_specs().items() for suffix in
             ["SequenceClassification", "TokenClassification", "QuestionAnswering"]
             if spec.model_class == f"AutoModelFor{suffix}"}


def torch_outputs(folder: Path, task: str, features: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    model = load_model(LoadRequest(str(folder), task)).model  # the app's own load (sdpa attention)
    with torch.inference_mode():
        out = model(**{k: torch.from_numpy(v) for k, v in features.items()})
    return {k: v.numpy() for k, v in out.items() if isinstance(v, torch.Tensor)}


@pytest.mark.parametrize("head", sorted(HEAD_TASK))
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_onnxruntime_equals_pytorch(arch: str, head: str, checkpoint_factory, tmp_path: Path) -> None:
    folder = checkpoint_factory(arch, head)
    task = HEAD_TASK[head]
    result = export_onnx(str(folder), task, tmp_path / "model.onnx", speed=False)
    assert result.max_difference <= TOLERANCE
    assert len(result.shapes) == len(SHAPES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]  # no partial left behind
    ort = load_onnx(tmp_path / "model.onnx")  # the tokenizer from the folder the file names
    assert ort.task == task
    for batch in (1, 2, 4):  # real texts: dynamic batch and sequence axes, padding within a batch
        features = ort.encode(TEXTS[:batch], PAIRS[:batch])
        got = ort.run(features)
        want = torch_outputs(folder, task, features)
        mask = features["attention_mask"].astype(bool)
        for name, value in got.items():
            difference = np.abs(value - want[name])
            if difference.shape[:2] == mask.shape:
                difference = difference[mask]
            assert difference.max() <= TOLERANCE, (name, batch, difference.max())


@pytest.mark.parametrize(("arch", "head"), [("bert", "MaskedLM"), ("bert", "NextSentencePrediction"),
                                            ("albert", "MultipleChoice"), ("distilbert", "MultipleChoice")])
def test_other_heads_export(arch: str, head: str, checkpoint_factory, tmp_path: Path) -> None:
    task = next(k for k, s in all_specs().items() if s.model_class == f"AutoModelFor{head}")
    result = export_onnx(str(checkpoint_factory(arch, head)), task, tmp_path / "m.onnx", speed=False)
    assert result.max_difference <= TOLERANCE


def test_pretraining_and_plain_encoders_are_refused_before_loading(tmp_path: Path) -> None:
    """Pre-training's two heads and the plain encoder (similarity, attention: BertModel's forward does
    not trace with transformers 5.24) are refused by name, before any weights are read."""
    refused = {all_specs()[k].model_class for k in all_specs() if k not in exportable_tasks()}
    assert refused == {"AutoModelForPreTraining", "AutoModel"}, "update the README's list"
    for key in (k for k in all_specs() if k not in exportable_tasks()):
        with pytest.raises(InputError, match="cannot be exported"):
            export_onnx("/no/such/folder", key, tmp_path / "m.onnx")


def test_bad_output_names_are_refused(checkpoint_factory, tmp_path: Path) -> None:
    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    task = HEAD_TASK["SequenceClassification"]
    with pytest.raises(InputError, match="does not end in .onnx"):
        export_onnx(folder, task, tmp_path / "m.bin")
    with pytest.raises(InputError, match="does not exist"):
        export_onnx(folder, task, tmp_path / "missing" / "m.onnx")


def test_a_failed_validation_keeps_the_users_file(checkpoint_factory, tmp_path: Path) -> None:
    target = tmp_path / "m.onnx"
    target.write_bytes(b"the user's earlier export")
    with pytest.raises(InputError, match="differs from PyTorch"):
        export_onnx(str(checkpoint_factory("bert", "TokenClassification")), HEAD_TASK["TokenClassification"],
                    target, tolerance=-1.0, speed=False, overwrite=True)  # asked to replace it, and then failed
    assert target.read_bytes() == b"the user's earlier export"
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


def test_cancel_writes_nothing(checkpoint_factory, tmp_path: Path) -> None:
    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    load_model(LoadRequest(folder, HEAD_TASK["SequenceClassification"], attn_implementation="eager"))
    control = TaskControl(on_progress=lambda event: control.request_stop() if "Validating" in event.message else None)
    with pytest.raises(TaskCancelled):
        export_onnx(folder, HEAD_TASK["SequenceClassification"], tmp_path / "m.onnx", control)
    assert list(tmp_path.iterdir()) == []


def test_speeds_are_measured_for_three_runtimes(checkpoint_factory, tmp_path: Path) -> None:
    result = export_onnx(str(checkpoint_factory("bert", "SequenceClassification")),
                         HEAD_TASK["SequenceClassification"], tmp_path / "m.onnx")
    assert [s.runtime for s in result.speeds] == ["onnxruntime", "pytorch", "pytorch int8"]
    assert all(s.ms_per_batch > 0 for s in result.speeds)
    data = result.to_json()
    assert data["max_difference"] == result.max_difference
    assert set(data["speedup_vs_pytorch"]) == {"onnxruntime", "pytorch int8"}


def test_roberta_multiple_choice_is_not_kept(checkpoint_factory, tmp_path: Path) -> None:
    """Known limit: torch's tracer records RoBERTa's choice head wrongly for other shapes (6e-3 off);
    validation catches it and keeps no file, rather than shipping a wrong model."""
    task = next(k for k, s in all_specs().items() if s.model_class == "AutoModelForMultipleChoice")
    with pytest.raises(InputError, match="differs from PyTorch"):
        export_onnx(str(checkpoint_factory("roberta", "MultipleChoice")), task, tmp_path / "m.onnx", speed=False)
    assert list(tmp_path.iterdir()) == []



def test_an_int8_model_is_refused(checkpoint_factory, tmp_path: Path) -> None:
    from bertstudio.core.export.onnx import export_loaded

    task = HEAD_TASK["SequenceClassification"]
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), task, quantize="int8"))
    with pytest.raises(InputError, match="Only a float32 model on the CPU"):
        export_loaded(loaded, tmp_path / "m.onnx")
    assert list(tmp_path.iterdir()) == []
