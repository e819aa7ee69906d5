"""Every data file a user gives (evaluate, train, classify --file, qa --context-file, attention
--out) is read through one bounded, validating reader (issue 17 items 5, 6 and 8): special
files are refused by name, wrong types and nesting are one message, long fields are read, a
big evaluation stops within a second or two of Cancel or Ctrl+C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bertstudio.core.errors import InputError, TaskCancelled
from bertstudio.core.evaluate.readers import read_dataset
from bertstudio.core.progress import TaskControl

TASKS = ("classification", "ner", "qa", "fill-mask", "nsp", "multiple-choice")


def finishes(call: Callable[[], Any], seconds: float = 20.0) -> Any:
    """call() in a thread: its result or its exception, or a failure (not a hang) when it blocks."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as error:  # noqa: BLE001 - handed back to the test
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still reading after {seconds} s (a special file read forever)")
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def fifo(tmp_path: Path) -> Any:
    """A FIFO with no writer: opening it for reading blocks. Unblocked afterwards, so a reader
    that wrongly opened it (the old code) ends."""
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    yield path
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


# -- special files: refused by what they are --------------------------------------------------------
@pytest.mark.parametrize("task", TASKS)
def test_a_fifo_as_evaluation_data_is_named_a_pipe(fifo: Path, task: str) -> None:
    with pytest.raises(InputError, match=r"is a pipe \(FIFO\), not a regular file") as caught:
        finishes(lambda: read_dataset(task, fifo))
    assert "does not exist" not in caught.value.message


@pytest.mark.parametrize("task", ["classification", "fill-mask"])
def test_a_device_as_evaluation_data_is_named_a_device(task: str) -> None:
    with pytest.raises(InputError, match="is a device, not a regular file"):
        finishes(lambda: read_dataset(task, "/dev/zero"))


def test_training_and_batch_readers_refuse_fifos(fifo: Path) -> None:
    from bertstudio.core.tasks.classification import table_columns, texts_of_file
    from bertstudio.core.tasks.ner.conll import read_conll
    from bertstudio.core.tasks.pretraining.corpus import read_corpus
    from bertstudio.core.training.data import read_labelled

    for read in (read_labelled, read_conll, read_corpus, table_columns, texts_of_file):
        with pytest.raises(InputError, match="pipe"):
            finishes(lambda read=read: read(fifo), seconds=5)
    from bertstudio.core.explain.importance import read_examples

    for task in ("classification", "nsp"):  # head-importance --data
        with pytest.raises(InputError, match="pipe"):
            finishes(lambda task=task: read_examples(fifo, task), seconds=5)


def _cli(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """The CLI in a child capped at 3 GiB of memory: the old code read /dev/zero until killed."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "XDG_STATE_HOME": str(tmp_path / "state")}
    return subprocess.run([sys.executable, "-m", "bertstudio", *args], capture_output=True, text=True,
                          timeout=120, env=env, preexec_fn=cap)


@pytest.mark.parametrize("args", [
    ("classify", "--model", "unused/model", "--file", "/dev/zero"),
    ("qa", "--model", "unused/model", "--question", "Who?", "--context-file", "/dev/zero"),
    ("evaluate", "--model", "unused/model", "--task", "classify", "--data", "/dev/zero"),
])
def test_cli_refuses_dev_zero_with_one_message(tmp_path: Path, args: tuple[str, ...]) -> None:
    done = _cli(*args, tmp_path=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "'/dev/zero' is a device, not a regular file" in done.stderr and "Traceback" not in done.stderr


def test_qa_context_file_is_bounded_and_checked(tmp_path: Path, fifo: Path) -> None:
    import argparse

    from bertstudio.cli._inputs import values
    from bertstudio.core.limits import MAX_CONTEXT_BYTES
    from bertstudio.core.tasks.spec import spec_for

    context = spec_for("qa").parts[1]

    big = tmp_path / "book.txt"
    with big.open("wb") as handle:
        handle.truncate(MAX_CONTEXT_BYTES + 1)  # sparse: no disk used
    for path, message in ((big, "at most 16 MiB"), (fifo, "pipe"), (tmp_path, "is a folder")):
        with pytest.raises(InputError, match=message):
            finishes(lambda path=path: values(argparse.Namespace(context=None, context_file=str(path)), context), 5)
    fine = tmp_path / "story.txt"
    fine.write_text("Ada wrote it.", encoding="utf-8")
    assert values(argparse.Namespace(context=None, context_file=str(fine)), context) == ["Ada wrote it."]


# -- SQuAD JSON: every level's type, and the depth --------------------------------------------------
SQUAD_BAD = {
    "deep": '{"data": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "deep-in-range": '{"data": [' + '{"x": ' * 500 + "1" + "}" * 500 + "]}",
    "data-int": {"data": [1]},
    "data-dict": {"data": {"paragraphs": []}},
    "data-null": {"data": None},
    "top-list": [1, 2],
    "paragraphs-int": {"data": [{"paragraphs": 5}]},
    "paragraphs-str": {"data": [{"paragraphs": "abc"}]},
    "paragraph-int": {"data": [{"paragraphs": [7]}]},
    "context-list": {"data": [{"paragraphs": [{"context": ["a"], "qas": []}]}]},
    "qas-dict": {"data": [{"paragraphs": [{"context": "Ada", "qas": {"question": "q"}}]}]},
    "qa-str": {"data": [{"paragraphs": [{"context": "Ada", "qas": ["Who?"]}]}]},
    "question-int": {"data": [{"paragraphs": [{"context": "Ada", "qas": [{"question": 5, "answers": []}]}]}]},
    "answers-str": {"data": [{"paragraphs": [{"context": "Ada", "qas": [{"question": "Who?", "answers": "Ada"}]}]}]},
    "answer-int": {"data": [{"paragraphs": [{"context": "Ada", "qas": [{"question": "Who?", "answers": [3]}]}]}]},
    "answer-text-list": {"data": [{"paragraphs": [{"context": "Ada", "qas": [
        {"question": "Who?", "answers": [{"text": ["Ada"]}]}]}]}]},
    "impossible-str": {"data": [{"paragraphs": [{"context": "Ada", "qas": [
        {"question": "Who?", "is_impossible": "yes", "answers": []}]}]}]},
    "not-json": "{data: [",
    "empty": "",
    "huge-number": '{"data": [' + "9" * 5000 + "]}",
}


@pytest.mark.parametrize("name", sorted(SQUAD_BAD))
def test_malformed_squad_is_one_message(tmp_path: Path, name: str) -> None:
    content = SQUAD_BAD[name]
    path = tmp_path / f"{name}.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_dataset("qa", path)
    message = caught.value.message
    assert path.name in message
    if name.startswith("deep"):
        assert "nested more than 64 levels" in message
    if name in ("data-int", "paragraphs-int"):
        assert "data[0] needs a \"paragraphs\" list" in message


def test_squad_with_good_and_bad_entries_names_the_bad_lines(tmp_path: Path) -> None:
    good = {"question": "Who wrote it?", "answers": [{"text": "Ada", "answer_start": 0}]}
    bad = {"question": "When?", "answers": "1843"}
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [
        {"context": "Ada wrote it in 1843.", "qas": [good, bad]}]}]}, indent=1), encoding="utf-8")
    with pytest.raises(InputError, match=r"1 malformed.*line \d+: data\[0\]\.paragraphs\[0\]\.qas\[1\] needs"):
        read_dataset("qa", path)
    path.write_text(json.dumps({"data": [{"title": "t", "paragraphs": [
        {"context": "Ada wrote it in 1843.", "qas": [good, {"question": "Why?", "is_impossible": True}]}]}]}))
    examples = read_dataset("qa", path).examples
    assert [x.gold for x in examples] == [("Ada",), ()] and examples[0].fields == {"title": "t"}


def test_cli_deep_squad_exits_1_not_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from bertstudio.cli import main

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("deep", "data-int", "paragraphs-int"):
        path = tmp_path / f"{name}.json"
        content = SQUAD_BAD[name]
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
        assert main(["evaluate", "--model", "unused/model", "--task", "qa", "--data", str(path)]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "internal error" not in err
    assert not (tmp_path / "state").exists()  # no crash log


def test_evaluation_batch_size_and_limit_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bertstudio.cli import main

    data = str(Path(__file__).resolve().parents[1] / "data" / "evaluate" / "topics.csv")
    for option, value in (("--batch-size", "100000000"), ("--limit", "10000000000")):
        assert main(["evaluate", "--model", "unused/model", "--task", "classify", "--data", data, option, value]) == 1
        err = capsys.readouterr().err
        assert f"{option} must be between 1 and" in err, err


# -- tables: long fields, wrong types, bounds --------------------------------------------------------
def test_a_csv_field_over_131072_characters_evaluates_and_trains(tmp_path: Path) -> None:
    from bertstudio.core.tasks.classification import read_texts
    from bertstudio.core.training.data import read_labelled

    long_text = "word " * 40_000  # 200,000 characters
    path = tmp_path / "long.csv"
    path.write_text(f'text,label\n"{long_text}",pos\nshort,neg\n', encoding="utf-8")
    assert len(read_labelled(path)) == 2
    assert len(read_dataset("classification", path).examples[0].inputs[0]) == len(long_text.strip())
    assert len(read_texts(path)[0]) == len(long_text)


def test_a_field_over_the_bound_names_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bertstudio.core.datafiles as datafiles

    monkeypatch.setattr(datafiles, "MAX_FIELD_CHARS", 1000)
    path = tmp_path / "long.csv"
    path.write_text("text,label\nfine,pos\n" + "x" * 2000 + ",neg\n", encoding="utf-8")
    with pytest.raises(InputError, match="line 3: a field is longer than 1,000 characters"):
        read_dataset("classification", path)


def test_row_bound_is_said(tmp_path: Path) -> None:
    from bertstudio.core.datafiles import read_lines, read_table

    table = tmp_path / "rows.csv"
    table.write_text("text,label\n" + "a,b\n" * 11, encoding="utf-8")
    with pytest.raises(InputError, match="more than 10 rows"):
        read_table(table, max_rows=10)
    lines = tmp_path / "rows.txt"
    lines.write_text("a\n" * 11, encoding="utf-8")
    with pytest.raises(InputError, match="more than 10 rows"):
        read_lines(lines, max_rows=10)


JSONL_ROWS = [
    '{"text": ["a", "list"], "label": "x"}',
    '{"text": {"an": "object"}, "label": "x"}',
    '{"text": "fine", "label": null}',
    '{"text": "fine", "label": ["x"]}',
    '{"text": "fine", "label": {"x": 1}}',
    '{"text": null, "label": "x"}',
    '{"text": 12345, "label": true}',
    '"just a string"',
    "[1, 2, 3]",
    "null",
    '{"text": "fine", "label": "x", "extra": ' + "[" * 5000 + "]" * 5000 + "}",
    '{"text": "fine", "label": "x", "extra": ' + "[" * 100 + "]" * 100 + "}",
    '{"text": "' + "y" * 300_000 + '", "label": "x"}',
    '{"text": "fine", "label": 1e999}',
    '{"text": "fine"',
    "\ufeff{}",
]


@pytest.mark.parametrize("task", ["classification", "nsp", "multiple-choice", "qa"])
@pytest.mark.parametrize("row", range(len(JSONL_ROWS)))
def test_jsonl_fuzz_is_a_dataset_or_one_message(tmp_path: Path, task: str, row: int) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"text": "a good film", "label": "x"}\n' + JSONL_ROWS[row] + "\n", encoding="utf-8")
    try:
        dataset = read_dataset(task, path)
    except InputError as error:
        assert error.message
    else:
        json.dumps([x.fields for x in dataset.examples])  # what the reader kept is plain data


@pytest.mark.parametrize("content", [
    "text,label\n\"unterminated,pos\n",
    "text,label\na,b,c,d\n",
    "\n\n\n",
    ",\n",
    "text,label\n" + "\x00" * 10,
    "text,label\na\x1cb,pos\nc,neg\n",
    "text,label\n\"a\nb\",pos\n",
])
@pytest.mark.parametrize("task", ["classification", "nsp", "qa", "multiple-choice"])
def test_csv_fuzz_is_a_dataset_or_one_message(tmp_path: Path, task: str, content: str) -> None:
    path = tmp_path / "rows.csv"
    path.write_text(content, encoding="utf-8")
    try:
        read_dataset(task, path)
    except InputError as error:
        assert error.message


@pytest.mark.parametrize("content", [
    b"\xff\xfe binary",
    b"John B-PER\x00\n",
    b"John " + b"B-PER " * 100_000 + b"\n",
    b"-DOCSTART- O\n\n",
    b"John\tB-PER\tx\ty\n\n" * 3,
    b"I-PER O\n",
    b"\n" * 1000,
])
def test_conll_and_text_fuzz_is_a_dataset_or_one_message(tmp_path: Path, content: bytes) -> None:
    from bertstudio.core.tasks.ner.conll import read_conll
    from bertstudio.core.tasks.pretraining.corpus import read_corpus

    path = tmp_path / "data.conll"
    path.write_bytes(content)
    for read in (lambda: read_dataset("ner", path), lambda: read_conll(path), lambda: read_corpus(path),
                 lambda: read_dataset("fill-mask", path)):
        try:
            read()
        except InputError as error:
            assert error.message


def test_header_of_a_special_or_huge_file_reads_little(tmp_path: Path, fifo: Path) -> None:
    from bertstudio.core.datafiles import first_line_header as header_of

    huge = tmp_path / "one-line.csv"
    huge.write_text("a," * 3_000_000, encoding="utf-8")
    assert finishes(lambda: header_of(fifo), 5) == []  # a FIFO is not opened (a hang guard, not a timing)
    assert len(header_of(huge)) == (1 << 16) // 2 + 1  # only the first 64 KiB are read: "a," x 32,768 of 6 MB


# -- attention --out: the user's file is named ----------------------------------------------------
def test_attention_out_errors_name_the_users_file(tmp_path: Path, fifo: Path) -> None:
    import numpy as np

    from bertstudio.core.tasks.attention import AttentionResult
    from bertstudio.core.tasks.attention.export import check_output, save

    out_fifo = tmp_path / "pipe.npz"
    os.mkfifo(out_fifo)
    with pytest.raises(InputError, match="not a regular file"):
        check_output(out_fifo)
    if Path("/proc").is_dir():
        with pytest.raises(InputError) as caught:
            check_output("/proc/a.npz")
        assert "'/proc/a.npz'" in caught.value.message and ".partial" not in caught.value.message
    result = AttentionResult(text="a", pair=None, tokens=("[CLS]", "a", "[SEP]"),
                             attentions=np.full((1, 1, 3, 3), 1 / 3, dtype=np.float32), segment_ids=(0, 0, 0),
                             special=(True, False, True), cls_index=0, sep_indices=(2,))
    from bertstudio.core.tasks.classification import ClassificationResult, export_csv

    with pytest.raises(InputError, match="not a regular file"):
        finishes(lambda: export_csv(ClassificationResult((), "single-label", batch=True), out_fifo), 5)
    gone = tmp_path / "gone" / "a.npz"
    with pytest.raises(InputError) as caught:
        save(gone, result)
    assert str(gone) in caught.value.message and ".partial" not in caught.value.message


# -- Cancel and Ctrl+C during a 200,000-row evaluation ---------------------------------------------
ROWS = 200_000


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """200,000 rows, each long enough that its length must be checked by the tokenizer."""
    path = tmp_path_factory.mktemp("big") / "big.csv"
    labels = ("negative", "positive")
    path.write_text("text,label\n" + "".join(
        f"the quick brown fox {i} jumps over the lazy dog again,{labels[i % 2]}\n" for i in range(ROWS)),
        encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def big_dataset(big_file: Path) -> Any:
    return read_dataset("classification", big_file)


class StopAtCheck(TaskControl):
    """A TaskControl whose Cancel is pressed at its `at`-th check (no timer, no clock), keeping every
    progress report. That the work raises TaskCancelled there says it checks Cancel `at` times
    inside the phase (between chunks), not once when a single long call has returned."""

    def __init__(self, at: int = 3) -> None:
        self.events: list[Any] = []
        super().__init__(on_progress=self.events.append)
        self.at, self.checks = at, 0

    def check(self) -> None:
        self.checks += 1
        if self.checks == self.at:
            self.request_stop()
        super().check()


def test_cancel_while_reading_a_big_file_stops_at_the_next_chunk(big_file: Path) -> None:
    stop = StopAtCheck()
    with pytest.raises(TaskCancelled):
        read_dataset("classification", big_file, control=stop)
    assert stop.checks == stop.at  # the read went no further than the check after Cancel


def test_cancel_while_tokenizing_a_200k_row_evaluation_stops_at_the_next_chunk(big_dataset: Any,
                                                                         checkpoint_factory: Any,
                                                                         monkeypatch: Any) -> None:
    from bertstudio.core import encoding
    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.models import LoadRequest, load_model

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    tokenized: list[int] = []
    encode_rows = encoding._encode_rows
    monkeypatch.setattr(encoding, "_encode_rows", lambda *a: tokenized.append(len(a[3])) or encode_rows(*a))
    stop = StopAtCheck()
    with pytest.raises(TaskCancelled):
        evaluate(loaded, big_dataset, stop)
    assert stop.checks == stop.at
    # Stopped a few batches in, rows tokenized a chunk ahead of them (engine.encode_run), not once every
    # row was tokenized.
    last = stop.events[-1]
    assert "Classified" in last.message and last.fraction < 0.5, last
    assert 0 < sum(tokenized) <= 3 * encoding.STREAM_CHUNK < len(big_dataset.examples), tokenized


def test_ctrl_c_while_tokenizing_is_seen_at_the_next_chunk(big_dataset: Any, checkpoint_factory: Any) -> None:
    """A signal is handled between Python steps: one tokenizer call over every row kept Ctrl+C
    waiting until it returned."""
    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.models import LoadRequest, load_model

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    events: list[Any] = []
    sent: list[int] = []  # how many progress reports there were when Ctrl+C was sent
    threads: list[threading.Thread] = []

    def ctrl_c() -> None:
        sent.append(len(events))
        os.kill(os.getpid(), signal.SIGINT)

    def seen(event: Any) -> None:  # the first report of the tokenizing: Ctrl+C from another thread
        events.append(event)
        if not threads:
            threads.append(threading.Thread(target=ctrl_c))
            threads[0].start()

    try:
        with pytest.raises(KeyboardInterrupt):
            evaluate(loaded, big_dataset, TaskControl(on_progress=seen))
        # seen at the end of the chunk under way (no clock): one call over every row reports nothing between
        assert sent and len(events) - sent[0] <= 2, [e.message for e in events[sent[0]:]]
        assert (events[-1].fraction or 0.0) < 0.5, events[-1]
    finally:
        for thread in threads:
            thread.join()


def test_cancel_while_checking_a_100k_row_batch_classification_stops_at_the_next_chunk(big_dataset: Any,
                                                                               checkpoint_factory: Any) -> None:
    from bertstudio.core.models import LoadRequest, load_model
    from bertstudio.core.tasks.classification import MAX_ROWS, classify_batch

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    texts = [x.inputs[0] for x in big_dataset.examples[:MAX_ROWS]]
    stop = StopAtCheck()
    with pytest.raises(TaskCancelled):
        classify_batch(loaded, texts, stop)
    assert stop.checks == stop.at and all((e.fraction or 0.0) < 0.5 for e in stop.events), stop.events[-1:]
