"""Counterfactual search (core/whatif, `bertstudio counterfactual`) on tiny random checkpoints:
every result is verified by the task itself, bounds and errors are messages, Cancel lands at once."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from bertstudio.cli import main
from bertstudio.core.errors import InputError, TaskCancelled
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import all_specs, spec_for_command
from bertstudio.core.whatif.edits import Edit, Word, apply, word_ids, words_of
from bertstudio.core.whatif.search import find, options


@pytest.fixture(scope="module")
def sensitive(checkpoint_factory, tmp_path_factory):  # noqa: ANN001, ANN201
    """sensitive(head) -> a tiny random BERT whose weights are drawn wide (initializer_range 0.6): the
    factory's (0.02) answers nearly the same for every input, so no edit could flip it."""
    import torch
    import transformers

    built: dict[str, Path] = {}

    def make(head: str) -> Path:
        if head not in built:
            source = checkpoint_factory("bert", head)
            config = transformers.AutoConfig.from_pretrained(source)
            config.initializer_range = 0.6
            torch.manual_seed(0)
            folder = tmp_path_factory.mktemp(f"sensitive-{head}")
            getattr(transformers, f"BertFor{head}")(config).save_pretrained(folder)
            transformers.AutoTokenizer.from_pretrained(source).save_pretrained(folder)
            built[head] = folder
        return built[head]

    return make


def _loaded(sensitive, command: str, head: str):  # noqa: ANN001, ANN202
    spec = spec_for_command(command)
    return spec, load_model(LoadRequest(str(sensitive(head)), spec.key))


def test_the_adapter_is_declared_by_the_four_specs_only() -> None:
    names = {s.cli_name for s in all_specs().values() if s.counterfactual is not None}
    assert names == {"classify", "nsp", "choice", "fill-mask"}
    assert sum(s.counterfactual.masked_lm for s in all_specs().values() if s.counterfactual) == 1


def test_words_edits_and_the_whole_word_vocabulary(sensitive) -> None:  # noqa: ANN001
    spec, loaded = _loaded(sensitive, "fill-mask", "MaskedLM")
    texts = ("the cat sat on the [MASK] .",)
    words = words_of(loaded, texts, (0,))
    assert [w.text for w in words] == ["the", "cat", "sat", "on", "the", "."]  # the mask is never edited
    cat, dot = words[1], words[5]
    assert apply(texts, [Edit(cat, "dog"), Edit(dot, "")]) == ("the dog sat on the [MASK]",)
    assert apply(texts, [Edit(cat, "")]) == ("the sat on the [MASK] .",)
    allowed = word_ids(loaded)
    vocab = loaded.tokenizer.get_vocab()
    assert allowed[vocab["paris"]] and not allowed[vocab["##s"]] and not allowed[vocab["[MASK]"]]
    assert not allowed[vocab["."]]


@pytest.mark.parametrize(
    ("command", "head", "texts", "method"),
    [
        ("classify", "SequenceClassification", ("a good film about the old city and the river .",), "hotflip"),
        ("classify", "SequenceClassification", ("a good film about the old city and the river .",), "ablation"),
        ("nsp", "NextSentencePrediction", ("the cat sat on the mat .", "the dog ran to the big house ."), "hotflip"),
        ("choice", "MultipleChoice", ("the man and the woman went to the", "school .", "river .", "house ."),
         "hotflip"),
        ("fill-mask", "MaskedLM", ("the cat sat on the [MASK] in the old house by the river .",), "mlm"),
    ],
)
def test_every_counterfactual_gets_the_label_it_claims(sensitive, command, head, texts, method) -> None:  # noqa: ANN001
    spec, loaded = _loaded(sensitive, command, head)
    inputs = spec.explain.inputs_of(texts)
    result = find(loaded, spec, inputs, options(method, 3, 3, per_word=6), TaskControl())
    assert result.counterfactuals, f"{command}/{method}: nothing found in {result.evaluated} inputs"
    sizes = [len(c.edits) for c in result.counterfactuals]
    assert sizes == sorted(sizes) and max(sizes) <= 3
    for found in result.counterfactuals:
        assert found.texts == apply(texts, found.edits)
        again = spec.counterfactual.predicted(loaded, spec.run(loaded, spec.explain.inputs_of(found.texts),
                                                                TaskControl()))
        assert again.label == found.prediction.label != result.original.label
        assert found.prediction.score == pytest.approx(again.score)
        if command == "choice":
            assert found.texts[1:] == texts[1:]  # only the prompt is edited


def test_cli_json_verified_by_the_classify_command(sensitive, capsys) -> None:  # noqa: ANN001
    classifier = str(sensitive("SequenceClassification"))
    mlm = str(sensitive("MaskedLM"))  # the same vocabulary
    text = "a good film about the old city and the river ."
    assert main(["counterfactual", "--model", classifier, "--task", "classify", text, "--mlm", mlm,
                 "--max-edits", "3", "--limit", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"original", "counterfactuals"} and set(out["original"]) == {"label", "score"}
    assert out["counterfactuals"]
    for found in out["counterfactuals"]:
        assert set(found) >= {"text", "label", "score", "edits"} and 1 <= len(found["edits"]) <= 3
        assert all(set(e) >= {"position", "from", "to"} for e in found["edits"])
        assert main(["classify", "--model", classifier, found["text"], "--json"]) == 0
        ranked = json.loads(capsys.readouterr().out)
        assert ranked[0]["label"] == found["label"] != out["original"]["label"]


def test_cli_errors_are_messages(sensitive, checkpoint_factory, capsys) -> None:  # noqa: ANN001
    classifier = str(sensitive("SequenceClassification"))
    roberta_mlm = str(checkpoint_factory("roberta", "MaskedLM"))
    base = ["counterfactual", "--model", classifier, "--task", "classify"]
    for args, message in (
        ([*base, "a good film .", "--max-edits", "9"], "between 1 and 5"),
        ([*base, "a good film .", "--limit", "0"], "between 1 and 50"),
        ([*base], "classify takes a text"),
        ([*base, "a good film .", "--method", "mlm"], "no trained masked-LM head"),
        ([*base, "a good film .", "--mlm", roberta_mlm], "another vocabulary"),
        ([*base, "[MASK]"], "no word"),
    ):
        assert main(args) == 1, args
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err


def test_none_found_is_an_empty_list_and_a_note(sensitive, capsys) -> None:  # noqa: ANN001
    model = str(sensitive("SequenceClassification"))
    assert main(["counterfactual", "--model", model, "--task", "classify", "good", "--method", "ablation",
                 "--max-edits", "1", "--json"]) == 0  # removing the only word leaves nothing to classify
    captured = capsys.readouterr()
    assert json.loads(captured.out)["counterfactuals"] == [] and "No edit of at most 1 word" in captured.err


def test_cancel_lands_within_a_second(sensitive) -> None:  # noqa: ANN001
    spec, loaded = _loaded(sensitive, "classify", "SequenceClassification")
    text = " ".join(["the good old city and the river in the night"] * 6)
    control = TaskControl()
    asked: list[float] = []

    def stop() -> None:
        asked.append(time.perf_counter())
        control.request_stop()

    timer = threading.Timer(0.3, stop)
    timer.start()
    with pytest.raises(TaskCancelled):
        find(loaded, spec, spec.explain.inputs_of((text,)), options("hotflip", 5, 50, 20, 16), control)
    landed = time.perf_counter()
    timer.join()
    assert asked and landed - asked[0] < 1.0


def test_options_are_bounded() -> None:
    with pytest.raises(InputError, match="between 1 and 20"):
        options("hotflip", per_word=21)
    with pytest.raises(InputError, match="Unknown counterfactual method"):
        options("lime")
    assert Word(0, 0, 0, 1, "a") == Word(0, 0, 0, 1, "a")


WATCHED = """
import sys
from bertstudio.core import progress
report = progress.TaskControl.report
import time
def watched(self, message, fraction=None, payload=None):
    if "edit(s): scored" in message:
        print("CF-RUNNING", file=sys.stderr, flush=True)
        time.sleep(60)  # mid-search until the Ctrl+C lands (a fast machine finished before it did)
    report(self, message, fraction, payload)
progress.TaskControl.report = watched
from bertstudio.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def test_ctrl_c_prints_cancelled_and_exits_130(sensitive) -> None:  # noqa: ANN001
    import os
    import signal
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": str(root)}
    text = " ".join(["the good old city and the river in the night"] * 6)
    command = [sys.executable, "-c", WATCHED, "counterfactual", "--model", str(sensitive("SequenceClassification")),
               "--task", "classify", text, "--method", "hotflip", "--max-edits", "5", "--per-word", "20", "--json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=root)
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.strip() == "CF-RUNNING":
            break
    assert seen and seen[-1].strip() == "CF-RUNNING", "".join(seen)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130 and "Cancelled." in err and "Traceback" not in err, err
    assert out == ""


def test_slow_forwards_shrink_the_batch_so_cancel_stays_quick() -> None:
    from bertstudio.core.whatif import generators
    from bertstudio.core.whatif.search import FORWARD_SECONDS, _next_rows

    assert _next_rows(16, 16, FORWARD_SECONDS * 4) == 8  # a busy machine: halve
    assert _next_rows(2, 2, 5.0) == 1 and _next_rows(1, 1, 5.0) == 1  # never below one row
    assert _next_rows(4, 4, FORWARD_SECONDS / 10) == 8  # quick again: grow back
    assert _next_rows(generators.BATCH, generators.BATCH, 0.0) == generators.BATCH  # up to the batch
    assert _next_rows(16, 3, 0.0) == 16  # a short last chunk says nothing about speed
