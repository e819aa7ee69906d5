"""ort_model (issue 33): an exported file runs with its tokenizer and gives the PyTorch head's logits;
a file that is not ONNX, or whose source folder is gone, is refused with a clear message."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from bertstudio.core.errors import InputError
from bertstudio.core.export.onnx import export_onnx
from bertstudio.core.export.ort_model import load_onnx
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.spec import all_specs

TASK = next(k for k, s in all_specs().items() if s.model_class == "AutoModelForSequenceClassification")


def test_logits_equal_pytorch_and_labels_travel(checkpoint_factory, tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(checkpoint_factory("electra", "SequenceClassification"), folder)
    export_onnx(str(folder), TASK, tmp_path / "m.onnx", speed=False)
    ort = load_onnx(tmp_path / "m.onnx")
    assert ort.id2label == {0: "negative", 1: "positive"}
    assert ort.input_names == ("input_ids", "attention_mask", "token_type_ids")
    texts = ["the cat sat on the mat", "paris"]
    got = ort.logits(texts)["logits"]
    loaded = load_model(LoadRequest(str(folder), TASK))
    with torch.inference_mode():
        want = loaded.model(**loaded.tokenizer(texts, padding=True, return_tensors="pt")).logits.numpy()
    assert np.abs(got - want).max() <= 1e-4
    shutil.rmtree(folder)  # the tokenizer's folder is gone: say so, or take one given
    with pytest.raises(InputError, match="No tokenizer"):
        load_onnx(tmp_path / "m.onnx")
    again = load_onnx(tmp_path / "m.onnx", tokenizer=checkpoint_factory("electra", "SequenceClassification"))
    assert np.abs(again.logits(texts)["logits"] - got).max() <= 1e-6


def test_not_an_onnx_file_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "m.onnx"
    bad.write_text("not a model")
    with pytest.raises(InputError, match="not an ONNX model"):
        load_onnx(bad)
    with pytest.raises(InputError, match="is not a file"):
        load_onnx(tmp_path / "missing.onnx")
