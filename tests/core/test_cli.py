"""The command line: JSON on stdout, warnings and errors on stderr, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from bertstudio.cli import main


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "bertstudio", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_fill_mask_json(real_models) -> None:
    done = _run("fill-mask", "--model", str(real_models["rxnmapper-albert-smiles-mlm"]), "C C ( = [MASK] ) O",
                "--top-k", "3", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)  # stdout is pure JSON
    assert len(result) == 1 and len(result[0]) == 3
    assert result[0][0]["token"] == "O" and set(result[0][0]) == {"token", "token_id", "score"}


def test_head_warning_goes_to_stderr(real_models, capsys) -> None:
    code = main(["fill-mask", "--model", str(real_models["all-minilm-l6-v2"]), "Paris is [MASK].", "--json"])
    captured = capsys.readouterr()
    assert code == 0
    assert "no trained fill-mask head" in captured.err
    json.loads(captured.out)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["fill-mask", "--model", "{bert}", "no mask here"], "no mask token"),
        (["fill-mask", "--model", "{bert}", ""], "empty"),
        (["fill-mask", "--model", "{tmp}", "a [MASK]"], "not a model folder"),
        (["fill-mask", "--model", "{bert}", "a [MASK]", "--device", "cuda:9"], "not available"),
        (["models", "--models-dir", "{tmp}/missing"], "does not exist"),
    ],
)
def test_user_errors_exit_non_zero_without_traceback(checkpoint_factory, tmp_path, capsys, args, message) -> None:
    args = [a.format(bert=checkpoint_factory("bert"), tmp=tmp_path) for a in args]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_models_json(real_models, capsys) -> None:
    assert main(["models", "--models-dir", str(real_models["all-minilm-l6-v2"].parent), "--json"]) == 0
    listed = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    assert listed["rxnmapper-albert-smiles-mlm"]["architecture"] == "AlbertForMaskedLM"
    assert "fill-mask" in listed["rxnmapper-albert-smiles-mlm"]["tasks"]


@pytest.mark.parametrize("command", [
    ["fill-mask", "{bert}", b"the \xff\xfe [MASK]"],
    ["ner", "{ner}", b"klaus \xc3\x28 vienna"],
    ["classify", "{cls}", b"bad \xff text"],
    ["nsp", "{nsp}", "the cat .", b"the \xff dog ."],
    ["qa", "{qa}", "--question", b"who \xff?", "--context", "klaus lives here"],
    ["choice", "{mc}", "--prompt", b"\xff", "--choice", "a", "--choice", "b"],
])
def test_invalid_utf8_arguments_are_one_message(checkpoint_factory, command) -> None:
    """Bytes that are not UTF-8 in a text argument: exit 1, one line naming the argument, no traceback."""
    folders = {"bert": ("bert", "MaskedLM"), "ner": ("bert", "TokenClassification"),
               "cls": ("bert", "SequenceClassification"), "nsp": ("bert", "NextSentencePrediction"),
               "qa": ("bert", "QuestionAnswering"), "mc": ("bert", "MultipleChoice")}
    name, model, *rest = command
    folder = str(checkpoint_factory(*folders[model.strip("{}")]))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUTF8": "0", "LC_ALL": "C.UTF-8"}
    done = subprocess.run([sys.executable, "-m", "bertstudio", name, "--model", folder, *rest],
                          capture_output=True, env=env, timeout=120)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1, err
    assert "not valid UTF-8" in err and "Traceback" not in err
