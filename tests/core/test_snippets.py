"""Copy as Python: the generated script, run on its own, prints the numbers the app shows."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.snippets import BUILDERS, python_snippet


def _run(script: str, tmp_path: Path) -> list[list[str]]:
    """Run the snippet in a fresh interpreter, offline; its output lines split at tabs."""
    path = tmp_path / "snippet.py"
    path.write_text(script, encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line.split("\t") for line in done.stdout.splitlines() if line.strip()]


def test_fill_mask_snippet_prints_our_scores(checkpoint_factory, tmp_path: Path) -> None:
    from bertstudio.core.tasks.fill_mask import FillMaskInput, predict

    folder = str(checkpoint_factory("bert", "MaskedLM"))
    inputs = FillMaskInput("the cat [MASK] on the [MASK] .", top_k=4)
    ours = predict(load_model(LoadRequest(folder, "fill-mask")), inputs.text, inputs.top_k)
    lines = _run(python_snippet("fill-mask", folder, inputs), tmp_path)
    expected = [(f"mask {n}", c.token, c.score) for n, m in enumerate(ours.masks, 1) for c in m.candidates]
    assert [(m, t) for m, t, _ in lines] == [(m, t) for m, t, _ in expected]
    assert [float(s) for _, _, s in lines] == pytest.approx([s for _, _, s in expected], abs=1e-5)


@pytest.mark.parametrize("pair", [None, "a good film"])
def test_classification_snippet_prints_our_scores(checkpoint_factory, tmp_path: Path, pair: str | None) -> None:
    from bertstudio.core.tasks.classification import classify

    folder = str(checkpoint_factory("bert", "SequenceClassification"))
    ours = classify(load_model(LoadRequest(folder, "classification")), "the cat sat on the mat", pair)
    lines = _run(python_snippet("classification", folder, {"text": "the cat sat on the mat", "pair": pair}),
                 tmp_path)
    assert [label for label, _ in lines] == [s.label for s in ours.rows[0].scores]
    assert [float(p) for _, p in lines] == pytest.approx([s.score for s in ours.rows[0].scores], abs=1e-5)


def test_nsp_snippet_prints_our_probabilities(checkpoint_factory, tmp_path: Path) -> None:
    from bertstudio.core.tasks.nsp import rank

    folder = str(checkpoint_factory("bert", "NextSentencePrediction"))
    a, candidates = "the cat sat on the mat .", ["the dog ran fast .", "paris is the capital of france ."]

    @dataclass(frozen=True)
    class Inputs:  # the shape of the task's input dataclass: getattr is all the builder needs
        sentence_a: str
        candidates: tuple[str, ...]

    ours = {r.sentence_b: r for r in rank(load_model(LoadRequest(folder, "nsp")), a, candidates).results}
    lines = _run(python_snippet("nsp", folder, Inputs(a, tuple(candidates))), tmp_path)
    assert [b for _, _, b in lines] == candidates
    for is_next, not_next, b in lines:
        assert float(is_next) == pytest.approx(ours[b].is_next, abs=1e-5)
        assert float(not_next) == pytest.approx(ours[b].not_next, abs=1e-5)


def test_every_snippet_is_valid_python_and_names_its_model() -> None:
    inputs = {"text": "x [MASK] 'quoted' \"too\"", "sentence_a": "a", "candidates": "b\nc", "question": "q?",
              "context": "c", "prompt": "p", "choices": ["1", "2"]}
    for task in BUILDERS:
        script = python_snippet(task, "/models/my model", inputs)
        ast.parse(script)  # quotes and newlines in inputs are escaped
        assert "'/models/my model'" in script
    with pytest.raises(ValueError):
        python_snippet("pretraining", "m", {})
