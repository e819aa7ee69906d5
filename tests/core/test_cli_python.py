"""`--python` on every task command: the Copy as Python script instead of a run (issue 17 item 1).

The printed script, run offline on its own, prints the same top result as the command's --json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bertstudio.cli import build_parser, command_modules, main
from bertstudio.core.snippets import python_snippet
from bertstudio.core.tasks.spec import spec_for


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _run_scripts(scripts: dict[str, str], tmp_path: Path) -> dict[str, list[list[str]]]:
    """Each script in a fresh namespace of ONE offline interpreter; its lines split at tabs."""
    for name, script in scripts.items():
        (tmp_path / f"{name}.py").write_text(script, encoding="utf-8")
    driver = tmp_path / "driver.py"
    driver.write_text("import runpy, sys\nfor name in sys.argv[2:]:\n    print(f'=== {name}', flush=True)\n"
                      "    runpy.run_path(f'{sys.argv[1]}/{name}.py', run_name='__main__')\n", encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run([sys.executable, str(driver), str(tmp_path), *scripts], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, list[list[str]]] = {}
    for line in done.stdout.splitlines():
        if line.startswith("=== "):
            current = out.setdefault(line[4:], [])
        elif line.strip():
            current.append(line.split("\t"))
    return out


def _best(lines: list[list[str]], score: int, what: int) -> str:
    """The line with the highest score (column `score`), its column `what`; a tie is no answer."""
    scores = [float(line[score]) for line in lines]
    assert scores.count(max(scores)) == 1, f"a tie in {lines}"
    return lines[scores.index(max(scores))][what]


def _strongest(result: dict[str, Any]) -> list[str]:
    """The script's line per head, computed from the command's --json attentions."""
    found = []
    for layer, heads in enumerate(np.asarray(result["attentions"], dtype=np.float32)):
        for head, row in enumerate(heads):
            q = int(row.max(axis=-1).argmax())
            k = int(row[q].argmax())
            tokens = result["tokens"]
            found.append(f"layer {layer} head {head}: strongest {tokens[q]} -> {tokens[k]} {float(row[q, k]):.4f}")
    return found


Case = tuple[list[str], Callable[[Any], Any], Callable[[list[list[str]]], Any]]


def test_every_task_command_takes_python() -> None:
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    import importlib

    from bertstudio.core.tasks.spec import all_specs, spec_for

    names = [spec_for(module.COMMAND.task).cli_name for name in command_modules()
             if hasattr(module := importlib.import_module(f"bertstudio.cli.{name}"), "COMMAND")]
    assert {"fill-mask", "classify", "ner", "nsp", "choice", "qa", "attention"} <= set(names)
    assert set(names) == {spec.cli_name for spec in all_specs().values() if spec.script is not None}
    for name in names:
        assert "--python" in commands[name]._option_string_actions, name


def test_python_scripts_print_the_commands_top_result(capsys, tmp_path, checkpoint_factory, real_models) -> None:
    albert = str(real_models["rxnmapper-albert-smiles-mlm"])
    topics = str(real_models["categorium-bert-tiny-topics-en"])
    minilm = str(real_models["all-minilm-l6-v2"])
    table = tmp_path / "rows.csv"
    table.write_text('id,review\n1,"a recipe for tomato soup, with basil"\n2,the match ended in a draw\n',
                     encoding="utf-8")
    tiny = {head: str(checkpoint_factory("bert", head)) for head in (
        "NextSentencePrediction", "MultipleChoice", "QuestionAnswering", "TokenClassification")}
    cases: dict[str, Case] = {
        "fill": (["fill-mask", "--model", albert, "C C ( = [MASK] ) O", "--top-k", "3"],
                 lambda r: r[0][0]["token"], lambda lines: lines[0][1]),
        "classify": (["classify", "--model", topics, "How to bake bread: flour, water, salt and yeast"],
                     lambda r: r[0]["label"], lambda lines: lines[0][0]),
        "pair": (["classify", "--model", topics, "the election results", "--pair", "a vote in parliament"],
                 lambda r: r[0]["label"], lambda lines: lines[0][0]),
        "file": (["classify", "--model", topics, "--file", str(table), "--column", "review"],
                 lambda r: [row[0]["label"] for row in r],
                 lambda lines: [lines[i + 1][0].strip() for i, line in enumerate(lines) if len(line) == 1]),
        "nsp": (["nsp", "--model", tiny["NextSentencePrediction"], "the cat sat on the mat .",
                 "the dog ran fast .", "paris is the capital of france .", "model"],
                lambda r: r[0]["sentence_b"], lambda lines: _best(lines, 0, 2)),
        "choice": (["choice", "--model", tiny["MultipleChoice"], "--prompt", "the cat sat on the",
                    "--choice", "mat", "--choice", "question answer sentence", "--choice", "attention head"],
                   lambda r: r[0]["choice"], lambda lines: _best(lines, 0, 2)),
        "qa": (["qa", "--model", tiny["QuestionAnswering"], "--question", "where is the cat",
                "--context", "the cat sat on the mat in paris ."],
               lambda r: (r[0]["answer"], f"{r[0]['score']:.6f}"), lambda lines: (lines[0][1], lines[0][0])),
        "ner": (["ner", "--model", tiny["TokenClassification"], "the cat sat on the mat in paris",
                 "--aggregation", "none"],
                lambda r: [(e["entity"], e["word"], f"{e['start']}-{e['end']}") for e in r],
                lambda lines: [tuple(line[:3]) for line in lines]),
        "attention": (["attention", "--model", minilm, "The cat sat on the mat.", "--pair", "It was happy."],
                      _strongest, lambda lines: ["\t".join(line) for line in lines]),
    }
    expected, scripts = {}, {}
    for name, (argv, top_of_json, _) in cases.items():
        code, out, err = _cli(capsys, *argv, "--json")
        assert code == 0, (name, err)
        expected[name] = top_of_json(json.loads(out))
        assert expected[name], name  # something to compare
        code, out, err = _cli(capsys, *argv, "--python")
        assert code == 0, (name, err)
        scripts[name] = out
    printed = _run_scripts(scripts, tmp_path)
    for name, (_, _, top_of_script) in cases.items():
        assert top_of_script(printed[name]) == expected[name], name


def test_python_prints_copy_as_python_without_loading(capsys, monkeypatch) -> None:
    """The same text as the UI's snippet, for a model that does not even exist: nothing is loaded."""
    import bertstudio.core.jobs as jobs
    import bertstudio.core.models as models

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("--python loaded a model")

    monkeypatch.setattr(jobs, "run_spec", refuse)
    monkeypatch.setattr(models, "load_model", refuse)
    code, out, err = _cli(capsys, "fill-mask", "--model", "nobody/no-such-model", "a [MASK]\nimport os", "--top-k",
                          "2", "--python")
    assert code == 0, err
    from bertstudio.core.tasks.fill_mask import FillMaskInput

    assert out == python_snippet(spec_for("fill-mask"), "nobody/no-such-model", FillMaskInput("a [MASK]\nimport os", 2))
    compile(out, "<script>", "exec")


@pytest.mark.parametrize("extra", [["--compare", "other/model"], ["--json"], ["--ablate-heads", "0:1"]])
def test_python_refuses_what_a_script_cannot_do(capsys, extra: list[str]) -> None:
    code, out, err = _cli(capsys, "fill-mask", "--model", "some/model", "a [MASK]", "--python", *extra)
    assert code == 1 and out == ""
    assert f"leave out {extra[0]}" in err and "Traceback" not in err


def test_python_checks_the_inputs_first(capsys) -> None:
    code, out, err = _cli(capsys, "qa", "--model", "some/model", "--question", "q", "--context", "c",
                          "--max-answer-len", "0", "--python")
    assert code == 1 and out == "" and "answer length" in err
