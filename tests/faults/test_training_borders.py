"""Training borders (issue 32): every count read from a training file is bounded before it allocates,
every resume is compared with what it resumes, every run stops on a loss that is not a finite number,
QA trains on the answer the file points at (answer_start), and the task names match the other commands'."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from bertstudio.cli import main
from bertstudio.core.errors import InputError
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.engine import train
from tests.core.test_training import toy_csv


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def left_behind(output: Path) -> list[str]:
    """What a failed run left beside its output: nothing but the data files may remain."""
    return sorted(p.name for p in output.parent.iterdir() if p.name.startswith(output.name))


# -- 5: a loss that is not a finite number stops every run; a score that would overflow is refused ----------
def sts_csv(path: Path, scores: list[str]) -> Path:
    rows = ["sentence1,sentence2,score"] + [f"the cat {i},the dog {i},{s}" for i, s in enumerate(scores)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("big", "shown"), [("1e20", "1e+20"), ("1e308", "1e+308"), ("-3e9", "-3e+09")])
def test_a_score_whose_square_overflows_is_refused_by_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           checkpoint_factory, big: str, shown: str) -> None:  # noqa: ANN001
    data = sts_csv(tmp_path / "sts.csv", ["0.5", "1.0", big, "2.0"])
    output = tmp_path / "out"
    code, _out, err = run_cli(capsys, "train", "--task", "regression", "--model",
                              str(checkpoint_factory("bert", "Model")), "--train", str(data), "--output", str(output),
                              "--max-steps", "2", "--eval-share", "0", "--max-length", "16")
    assert code == 1 and f"line 4: score {shown} is outside ±1e+09" in err and "scale the scores" in err, err
    assert left_behind(output) == []


def test_an_overflowing_loss_stops_the_run_and_saves_nothing(tmp_path: Path, checkpoint_factory,  # noqa: ANN001
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """What the attacker saw with 1e20 (the bound lifted): the loss was shown as 0.0 and a model saved."""
    from bertstudio.core.tasks.classification import train_regression as regression

    monkeypatch.setattr(regression, "MAX_ABS_SCORE", float("inf"))
    output = tmp_path / "out"
    config = TrainConfig(task="regression", model=str(checkpoint_factory("bert", "Model")),
                         train_file=str(sts_csv(tmp_path / "sts.csv", ["1e20", "-1e20", "3e20", "2e20"])),
                         output_dir=str(output), eval_share=0.0, max_steps=4, save_steps=1, batch_size=2,
                         max_length=16)
    with pytest.raises(InputError, match=r"Training stopped at step 1: the loss is inf, not a finite number, "
                                         r"so nothing was saved"):
        train(config)
    assert left_behind(output) == []  # no model, no NaN checkpoint, no lock, no .partial


def poisoned(folder: Path, target: Path) -> Path:
    """A copy of a model whose word embeddings are NaN: every task's loss is NaN from the first step."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(folder, target)
    weights = load_file(str(target / "model.safetensors"))
    name = next(k for k in weights if k.endswith("word_embeddings.weight"))
    weights[name] = weights[name] * float("nan")
    save_file(weights, str(target / "model.safetensors"), metadata={"format": "pt"})
    return target


@pytest.mark.parametrize("task", ["text-classification", "qa", "choice"])
def test_every_task_stops_on_a_nan_loss(task: str, tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    from tests.core.test_training_tasks import task_config

    model = poisoned(checkpoint_factory("bert", "Model"), tmp_path / "nan-model")
    output = tmp_path / "out"
    if task == "text-classification":
        config = TrainConfig(task=task, model=str(model), train_file=str(toy_csv(tmp_path / "toy.csv", 16)),
                             output_dir=str(output), eval_share=0.0, max_steps=3, batch_size=8, max_length=16)
    else:
        config = task_config(task, tmp_path, model, output_dir=str(output), max_steps=3, eval_file=None,
                             eval_share=0.0)
    with pytest.raises(InputError, match=r"at step 1: the (loss|gradient norm) is nan, not a finite number"):
        train(replace(config, save_steps=1))
    assert left_behind(output) == []


# -- 3: a resume is compared with what it resumes ---------------------------------------------------------
def stopped_choice_run(tmp_path: Path, model: Path) -> tuple[TrainConfig, Path]:
    """A multiple-choice run stopped after step 2: its output and resumable checkpoint-2."""
    import threading

    from tests.core.test_training_tasks import collect, task_config

    stop = threading.Event()
    control, _events = collect(stop_at=2, stop=stop)
    config = task_config("choice", tmp_path, model, eval_file=None, eval_share=0.0, max_steps=50)
    result = train(config, control, stop_event=stop)
    assert result.stopped and result.checkpoints_dir
    return config, Path(result.checkpoints_dir)


def test_resume_of_another_task_is_refused_and_leaves_the_checkpoints(
        tmp_path: Path, checkpoint_factory, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    from tests.core.test_training_tasks import small_copy

    model = checkpoint_factory("bert", "Model")
    choice, checkpoints = stopped_choice_run(tmp_path, model)
    before = sorted(str(p.relative_to(checkpoints)) for p in checkpoints.rglob("*"))
    sts = small_copy("regression", "sts_train.csv", tmp_path, 16)
    code, _out, err = run_cli(capsys, "train", "--task", "regression", "--model", str(model), "--train", str(sts),
                              "--output", choice.output_dir, "--resume", "--max-steps", "50", "--eval-share", "0",
                              "--max-length", "64", "--batch-size", "4")
    assert code == 1 and "are of a 'choice' run, not 'regression'" in err and "--task choice" in err, err
    assert sorted(str(p.relative_to(checkpoints)) for p in checkpoints.rglob("*")) == before
    assert json.loads((Path(choice.output_dir) / "bertstudio-run.json").read_text())["task"] == "choice"
    # the run it is resumes (same task, model and data)
    result = train(replace(choice, resume=True, max_steps=5))
    assert result.step == 5 and not result.stopped


def test_resume_with_other_data_or_model_is_refused_naming_what_differs(tmp_path: Path,  # noqa: ANN001
                                                                         checkpoint_factory) -> None:
    model = checkpoint_factory("bert", "Model")
    choice, _checkpoints = stopped_choice_run(tmp_path, model)
    changed = tmp_path / "changed.csv"
    changed.write_text(Path(choice.train_file).read_text(encoding="utf-8").replace(",1\n", ",0\n", 1))
    with pytest.raises(InputError, match=r"are of another run; what differs: training data: sha256 \w+ of the "
                                         r"training file, 16 rows trained on then, sha256 \w+ of the training file"):
        train(replace(choice, resume=True, train_file=str(changed)))
    other = tmp_path / "other-model"
    shutil.copytree(model, other)
    with pytest.raises(InputError, match=f"what differs: base model: {model} then, {other} now"):
        train(replace(choice, resume=True, model=str(other)))


def test_a_marker_that_claims_another_task_is_checked_against_the_checkpoint(tmp_path: Path,  # noqa: ANN001
                                                                              checkpoint_factory) -> None:
    """The marker is a claim: rewritten to 'regression' without the run record (as an older version wrote
    it), the checkpoint's own head still says multiple choice."""
    from tests.core.test_training_tasks import small_copy

    model = checkpoint_factory("bert", "Model")
    choice, checkpoints = stopped_choice_run(tmp_path, model)
    marker = checkpoints / "bertstudio-run.json"
    record = json.loads(marker.read_text())
    del record["run"]
    marker.write_text(json.dumps({**record, "task": "regression"}))
    sts = small_copy("regression", "sts_train.csv", tmp_path, 16)
    config = TrainConfig(task="regression", model=str(model), train_file=str(sts), output_dir=choice.output_dir,
                         eval_share=0.0, max_steps=50, batch_size=4, max_length=64, resume=True)
    with pytest.raises(InputError, match=r"holds another model head than this run trains; what differs: "
                                         r"architecture: BertForMultipleChoice then, BertForSequenceClassification"):
        train(config)


# -- 2: QA trains on the occurrence answer_start points at, and checks it --------------------------------
TWICE = "In 1990 Ada moved to Rome. Bob was born in 1990 in Paris."


def squad_file(path: Path, start: str, context: str = TWICE, answer: str = "1990") -> Path:
    """A SQuAD file written as text, so that NaN, 1e400 and true reach the reader as the attacker wrote them."""
    qa = (f'{{"question": "When was Bob born?", "id": "q1", "answers": [{{"text": {json.dumps(answer)}'
          + (f', "answer_start": {start}' if start else "") + "}]}")
    path.write_text(f'{{"data": [{{"title": "t", "paragraphs": [{{"context": {json.dumps(context)},\n'
                    f'"qas": [\n{qa}]}}]}}]}}\n', encoding="utf-8")
    return path


def test_qa_labels_the_occurrence_answer_start_points_at(tmp_path: Path, checkpoint_factory) -> None:  # noqa: ANN001
    from transformers import AutoTokenizer

    from bertstudio.core.tasks.qa.train import encode_windows
    from bertstudio.core.tasks.qa.train_read import read_qa

    [example] = read_qa(squad_file(tmp_path / "twice.json", "43"))
    assert example.start == 43 != TWICE.find("1990")
    tokenizer = AutoTokenizer.from_pretrained(checkpoint_factory("bert", "Model"))
    [feature] = encode_windows(tokenizer, [example], 64)
    offsets = feature["offset_mapping"]
    assert offsets[feature["start_positions"]][0] == 43 and offsets[feature["end_positions"]][1] == 47


@pytest.mark.parametrize(("start", "message"), [
    ("-5", r"answer_start is -5: the answer '1990' cannot start there in a context of 57 characters"),
    ("1000000000", r"answer_start is 1000000000: the answer '1990' cannot start there"),
    ('"28"', r"answer_start is \"28\": it must be a whole number"),
    ("true", r"answer_start is true: it must be a whole number"),
    ("NaN", r"answer_start is NaN: it must be a whole number"),
    ("1e400", r"answer_start is Infinity: it must be a whole number"),
    ("43.0", r"answer_start is 43.0: it must be a whole number"),
    ("10", r"answer_start is 10, where the context reads 'a mo', not the answer '1990' \(it is at 3, 43\)"),
    ("", r"the answer '1990' occurs 2 times in its context and no data\[0\]\.paragraphs\[0\]\.qas\[0\]\.answers\[0\]"
         r"\.answer_start says which one is meant"),
])
def test_a_bad_answer_start_names_its_entry_and_line(tmp_path: Path, start: str, message: str) -> None:
    from bertstudio.core.tasks.qa.train_read import read_qa

    with pytest.raises(InputError, match=r"twice\.json has 1 malformed row\(s\): line 3: "
                                         r"(data\[0\]\.paragraphs\[0\]\.qas\[0\]\.answers\[0\]\.)?" + message):
        read_qa(squad_file(tmp_path / "twice.json", start))


def test_a_table_may_say_answer_start_and_an_answer_without_it_must_be_unique(tmp_path: Path) -> None:
    from bertstudio.core.tasks.qa.train_read import read_qa

    table = tmp_path / "qa.csv"
    table.write_text(f'question,context,answer,answer_start\nWhen?,"{TWICE}",1990,43\nWho?,Ann sat.,Ann,\n')
    assert [x.start for x in read_qa(table)] == [43, 0]
    table.write_text(f'question,context,answer,answer_start\nWhen?,"{TWICE}",1990,\n')
    with pytest.raises(InputError, match=r"line 2: the answer '1990' occurs 2 times in its context and no column "
                                         r"answer_start says which one is meant"):
        read_qa(table)
    table.write_text(f'question,context,answer,answer_start\nWhen?,"{TWICE}",1990,-43\n')
    with pytest.raises(InputError, match=r"line 2: column answer_start is \"-43\": it must be a whole number"):
        read_qa(table)


# -- 1: QA windows are bounded before they are made, made in chunks, with progress and Cancel -------------
def long_context_squad(path: Path, sentences: int, questions: int) -> Path:
    """The attacker's file, smaller: one context of many sentences shared by many questions."""
    context = " ".join(f"Sentence {i} says the cat sat." for i in range(sentences))
    start = context.index(f"Sentence {sentences // 2} ")
    qas = [{"id": f"q{i}", "question": f"Which sentence is number {i}?",
            "answers": [{"text": f"Sentence {sentences // 2}", "answer_start": start}]} for i in range(questions)]
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]}, indent=1))
    return path


def test_a_context_of_too_many_windows_is_refused_with_the_bound_before_tokenizing(
        tmp_path: Path, checkpoint_factory, capfd: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    from bertstudio.core.tasks.qa.train_windows import MAX_WINDOWS_PER_QUESTION
    from tests.conftest import run_cli

    data = long_context_squad(tmp_path / "big.json", 20_000, 40)
    output = tmp_path / "out"
    done = run_cli(capfd, "train", "--task", "qa", "--model", str(checkpoint_factory("bert", "Model")), "--train",
                   str(data), "--output", str(output), "--max-steps", "1", "--eval-share", "0", "--max-length", "64",
                   "--json")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert (f"40 question(s) have a context that makes more than the {MAX_WINDOWS_PER_QUESTION} windows of 64 "
            "tokens one question may take: line 11 (") in done.stderr
    assert "windows, at least" in done.stderr and "and 32 more." in done.stderr and "--max-length" in done.stderr
    shown = [json.loads(line) for line in done.stdout.splitlines()]
    assert shown and {line["event"] for line in shown} == {"prepare"}  # progress came before the refusal
    assert left_behind(output) == []  # no lock, no checkpoints folder


def test_qa_windows_are_made_in_chunks_that_honour_cancel(checkpoint_factory) -> None:  # noqa: ANN001
    from transformers import AutoTokenizer

    from bertstudio.core.errors import TaskCancelled
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.qa.train import ENCODE_CHUNK, encode_windows
    from bertstudio.core.tasks.qa.train_read import QAExample

    tokenizer = AutoTokenizer.from_pretrained(checkpoint_factory("bert", "Model"))
    calls = []
    real = type(tokenizer).__call__

    class Counting(type(tokenizer)):  # type: ignore[misc]
        def __call__(self, *args, **kwargs):  # noqa: ANN002, ANN003, ANN204
            calls.append(len(args[0]))
            return real(self, *args, **kwargs)

    tokenizer.__class__ = Counting
    rows = [QAExample(i + 2, "what sat", f"the cat {i} sat on the mat", ("cat",), 4) for i in range(5 * ENCODE_CHUNK)]
    messages: list[str] = []

    def on_progress(event) -> None:  # noqa: ANN001
        messages.append(event.message)
        if event.message.startswith(f"Tokenizing questions: {2 * ENCODE_CHUNK:,}"):
            control.request_stop()

    control = TaskControl(on_progress)
    with pytest.raises(TaskCancelled):
        encode_windows(tokenizer, rows, 32, control)
    windows = [n for n in calls if n == ENCODE_CHUNK]
    assert len(windows) == 2  # two chunks were made, the third was not started
    assert messages[-1] == f"Tokenizing questions: {2 * ENCODE_CHUNK:,} of {5 * ENCODE_CHUNK:,}…"
    tokenizer.__class__ = type(tokenizer).__mro__[1]
    assert len(encode_windows(tokenizer, rows, 32)) == 5 * ENCODE_CHUNK  # without a stop: every window


def test_window_count_is_the_tokenizers(checkpoint_factory) -> None:  # noqa: ANN001
    """The bound is checked on counted windows: the count equals what the tokenizer makes."""
    from transformers import AutoTokenizer

    from bertstudio.core.tasks.qa.train_windows import window_stride, windows_for

    tokenizer = AutoTokenizer.from_pretrained(checkpoint_factory("bert", "Model"))
    specials = tokenizer.num_special_tokens_to_add(pair=True)
    for max_length in (32, 64):
        for words in (1, 20, 57, 300):
            context, question = " ".join(["cat"] * words), "what is the dog"
            made = tokenizer([question], [context], truncation="only_second", max_length=max_length,
                             stride=window_stride(max_length), return_overflowing_tokens=True)
            tokens = len(tokenizer(context, add_special_tokens=False)["input_ids"])
            asked = len(tokenizer(question, add_special_tokens=False)["input_ids"])
            assert windows_for(tokens, asked, max_length, specials) == len(made["input_ids"]), (max_length, words)


# -- 12, 13c: the number of choices is bounded, and one choice column is said to be one -------------------
def test_twenty_thousand_choice_columns_are_refused_with_the_bound(tmp_path: Path, checkpoint_factory,  # noqa: ANN001
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from bertstudio.core.tasks.multiple_choice import MAX_CHOICES

    wide = tmp_path / "wide.csv"
    names = [f"choice{i}" for i in range(20_000)]
    rows = [f"Pick one {r}," + ",".join(f"c{i}" for i in range(20_000)) + f",{r % 3}" for r in range(4)]
    wide.write_text("prompt," + ",".join(names) + ",label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    output = tmp_path / "out"
    code, _out, err = run_cli(capsys, "train", "--task", "choice", "--model", str(checkpoint_factory("bert", "Model")),
                              "--train", str(wide), "--output", str(output), "--max-steps", "1", "--eval-share", "0")
    assert code == 1 and (f"wide.csv has 20,000 choice columns; multiple choice trains on at most {MAX_CHOICES} "
                          "choices per question") in err, err
    assert left_behind(output) == []


def test_a_choices_list_over_the_bound_is_named_by_line(tmp_path: Path) -> None:
    from bertstudio.core.tasks.multiple_choice.train import read_choices

    jsonl = tmp_path / "listed.jsonl"
    jsonl.write_text(json.dumps({"prompt": "Pick", "choices": ["a", "b"], "label": 0}) + "\n"
                     + json.dumps({"prompt": "Pick", "choices": [f"c{i}" for i in range(65)], "label": 1}) + "\n")
    with pytest.raises(InputError, match=r"listed\.jsonl has 1 malformed row\(s\): line 2: 65 choices; at most 64"):
        read_choices(str(jsonl))


def test_a_single_choice_column_says_two_choices_are_needed(tmp_path: Path) -> None:
    from bertstudio.core.training.trainable import TRAINABLE

    one = tmp_path / "one.csv"
    one.write_text("prompt,choice0,label\nPick,a,0\nPick,b,0\n", encoding="utf-8")
    config = TrainConfig(task="choice", train_file=str(one), model="m", output_dir=str(tmp_path / "o"))
    with pytest.raises(InputError, match=r"one\.csv has one choice column \('choice0'\): a multiple-choice question "
                                         r"needs at least two choices\. Put each choice in its own numbered column "
                                         r"\(choice0, choice1…\)"):
        TRAINABLE["choice"].read(config)


# -- task names: the other commands' short names, and the long keys --------------------------------------
def test_train_takes_the_task_names_every_other_command_uses(capsys: pytest.CaptureFixture[str]) -> None:
    from bertstudio.cli import build_parser
    from bertstudio.cli.train import config_from_args

    def task_of(name: str) -> str:
        args = build_parser().parse_args(["train", "--task", name, "--model", "m", "--train", "t", "--output", "o"])
        return config_from_args(args).task

    assert [task_of(n) for n in ("classify", "text-classification", "ner", "token-classification", "qa", "distill")] \
        == ["text-classification", "text-classification", "token-classification", "token-classification", "qa",
            "distill"]
    assert TrainConfig(task="ner").task == "token-classification"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "--task {classify,ner,pretraining,qa,choice,regression,distill}" in shown
    assert "(text-classification for classify, token-classification for ner are accepted too)" in shown


# -- every count read from a training file: the labels become the head's rows ----------------------------
@pytest.mark.parametrize("task", ["text-classification", "token-classification"])
def test_more_labels_than_a_model_may_hold_are_refused_before_the_head(tmp_path: Path, task: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from bertstudio.core import model_folder
    from bertstudio.core.training.trainable import TRAINABLE

    monkeypatch.setattr(model_folder, "MAX_LABELS", 5)  # 100,000 in the product: the same check, a smaller file
    if task == "text-classification":
        data = tmp_path / "many.csv"
        data.write_text("text,label\n" + "".join(f"row {i},label{i}\n" for i in range(6)), encoding="utf-8")
    else:
        data = tmp_path / "many.conll"
        data.write_text("".join(f"word{i} B-T{i}\nmore I-T{i}\n\n" for i in range(3)), encoding="utf-8")  # 6 labels
    config = TrainConfig(task=task, train_file=str(data), model="m", output_dir=str(tmp_path / "o"), eval_share=0.0)
    with pytest.raises(InputError, match=rf"{data.name} has 6 different labels; a classifier head holds at most 5\."):
        TRAINABLE[task].read(config)


def test_ctrl_c_while_qa_windows_are_made_cancels_at_the_next_chunk(tmp_path: Path,  # noqa: ANN001
                                                                     checkpoint_factory) -> None:
    """The attacker's Ctrl+C printed 'stopping after this step' and the process lived on: now the
    first progress line of the tokenizing is answered by a cancel, exit 130, nothing left behind."""
    import signal
    import subprocess
    import sys

    from tests.faults.test_training_interrupts import ENV, ROOT

    qas = [{"id": f"q{i}", "question": f"Who sat on mat {i}?", "answers": [{"text": "Ann", "answer_start": 0}]}
           for i in range(20_000)]
    data = tmp_path / "many.json"
    data.write_text(json.dumps({"data": [{"paragraphs": [{"context": "Ann sat on the mat.", "qas": qas}]}]}))
    output = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-m", "bertstudio", "train", "--task", "qa", "--model",
                                str(checkpoint_factory("bert", "Model")), "--train", str(data), "--output",
                                str(output), "--max-steps", "1", "--eval-share", "0", "--max-length", "32", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
    assert process.stdout is not None
    for raw in process.stdout:
        if json.loads(raw)["message"].startswith("Tokenizing questions: 0 of 20,000"):
            process.send_signal(signal.SIGINT)
            break
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "Ctrl+C: cancelling…" in err and err.strip().splitlines()[-1] == "Cancelled." and "Traceback" not in err
    assert all(json.loads(line)["event"] == "prepare" for line in out.splitlines())  # no plan, no step
    assert left_behind(output) == []


def test_fp16_skipped_steps_are_not_a_divergence_and_json_stays_json() -> None:
    """fp16's loss scaler logs an infinite gradient norm on the steps it skips (by design): that alone does
    not stop an fp16 run, and no event is ever written with JSON's missing NaN or Infinity."""
    from bertstudio.core.training.callback import not_finite
    from bertstudio.core.training.events import TrainingEvent

    assert not_finite({"loss": 0.7, "grad_norm": float("inf")}) == "the gradient norm is inf, not a finite number"
    assert not_finite({"loss": 0.7, "grad_norm": float("inf")}, gradients=False) == ""
    assert not_finite({"loss": float("nan")}, gradients=False) == "the loss is nan, not a finite number"
    line = json.dumps(TrainingEvent("step", step=3, loss=0.7, grad_norm=float("inf")).to_json(), allow_nan=False)
    assert json.loads(line) == {"event": "step", "step": 3, "max_steps": 0, "loss": 0.7}
