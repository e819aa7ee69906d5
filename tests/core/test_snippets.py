"""Copy as Python: the generated scripts, run on their own, print the numbers the app shows."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.snippets import python_snippet
from bertstudio.core.tasks.spec import all_specs, spec_for

TEXT = "the cat sat on the mat"


def _run_all(scripts: dict[str, str], tmp_path: Path) -> dict[str, list[list[str]]]:
    """Run each script in a fresh namespace of ONE offline interpreter (torch is imported once)."""
    for name, script in scripts.items():
        (tmp_path / f"{name}.py").write_text(script, encoding="utf-8")
    driver = tmp_path / "driver.py"
    driver.write_text(
        "import runpy, sys\n"
        "for name in sys.argv[1:]:\n"
        "    print(f'=== {name}', flush=True)\n"
        f"    runpy.run_path({str(tmp_path)!r} + f'/{{name}}.py', run_name='__main__')\n",
        encoding="utf-8",
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, str(driver), *scripts], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, list[list[str]]] = {}
    current = ""
    for line in done.stdout.splitlines():
        if line.startswith("=== "):
            current = line[4:]
            out[current] = []
        elif line.strip():
            out[current].append(line.split("\t"))
    return out


@dataclass(frozen=True)
class _NspLike:  # the shape of core.tasks.nsp.NspInput: getattr is all a builder needs
    sentence_a: str
    candidates: tuple[str, ...]


def test_snippets_print_our_numbers(checkpoint_factory, tmp_path: Path) -> None:
    from bertstudio.core.tasks.classification import ClassificationBatchInput, classify, classify_batch, read_texts
    from bertstudio.core.tasks.fill_mask import FillMaskInput, predict
    from bertstudio.core.tasks.nsp import rank

    mlm = str(checkpoint_factory("bert", "MaskedLM"))
    classifier = str(checkpoint_factory("bert", "SequenceClassification"))
    nsp = str(checkpoint_factory("bert", "NextSentencePrediction"))
    fill_input = FillMaskInput("the cat [MASK] on the [MASK] .", top_k=4)
    a, candidates = "the cat sat on the mat .", ("the dog ran fast .", "paris is the capital of france .")
    table = tmp_path / "reviews.csv"
    table.write_text('id,review\n1,"the cat sat, on the mat"\n2,a good film\n', encoding="utf-8")
    scripts = {
        "fill": python_snippet(spec_for("fill-mask"), mlm, fill_input),
        "single": python_snippet(spec_for("classification"), classifier, {"text": TEXT}),
        "pair": python_snippet(spec_for("classification"), classifier, {"text": TEXT, "pair": "a good film"}),
        "batch": python_snippet(spec_for("classification"), classifier, ClassificationBatchInput(path=str(table),
                                                                                       column="review")),
        "nsp": python_snippet(spec_for("nsp"), nsp, _NspLike(a, candidates)),
    }
    printed = _run_all(scripts, tmp_path)

    ours_fill = predict(load_model(LoadRequest(mlm, "fill-mask")), fill_input.text, fill_input.top_k)
    expected = [(f"mask {n}", c.token, c.score) for n, m in enumerate(ours_fill.masks, 1) for c in m.candidates]
    assert [(m, t) for m, t, _ in printed["fill"]] == [(m, t) for m, t, _ in expected]
    assert [float(s) for _, _, s in printed["fill"]] == pytest.approx([s for _, _, s in expected], abs=1e-5)

    loaded = load_model(LoadRequest(classifier, "classification"))
    for name, pair in (("single", None), ("pair", "a good film")):
        scores = classify(loaded, TEXT, pair).rows[0].scores
        assert [label for label, _ in printed[name]] == [s.label for s in scores], name
        assert [float(p) for _, p in printed[name]] == pytest.approx([s.score for s in scores], abs=1e-5), name
    batch = classify_batch(loaded, read_texts(table, "review"))
    assert [line[0] for line in printed["batch"] if len(line) == 1] == ["the cat sat, on the mat", "a good film"]
    assert [float(line[1]) for line in printed["batch"] if len(line) == 2] == pytest.approx(
        [s.score for row in batch.rows for s in row.scores], abs=1e-5)

    ours_nsp = {r.sentence_b: r for r in rank(load_model(LoadRequest(nsp, "nsp")), a, list(candidates)).results}
    assert [b for _, _, b in printed["nsp"]] == list(candidates)
    for is_next, not_next, b in printed["nsp"]:
        assert float(is_next) == pytest.approx(ours_nsp[b].is_next, abs=1e-5)
        assert float(not_next) == pytest.approx(ours_nsp[b].not_next, abs=1e-5)


def test_every_snippet_is_valid_python_and_names_its_model() -> None:
    inputs = {"text": "x [MASK] 'quoted' \"too\"", "sentence_a": "a", "candidates": "b\nc", "question": "q?",
              "context": "c", "prompt": "p", "choices": ["1", "2"], "a": "a", "bs": ["b"]}
    scripted = [spec for spec in all_specs().values() if spec.script is not None]
    assert len(scripted) >= 7  # every task with a tab writes one
    for spec in scripted:
        script = python_snippet(spec, "/models/my model", inputs)
        ast.parse(script)  # quotes and newlines in inputs are escaped
        assert "'/models/my model'" in script
    with pytest.raises(ValueError):
        python_snippet(spec_for("pretraining"), "m", {})
