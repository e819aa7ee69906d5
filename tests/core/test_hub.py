"""Download progress from the Hub client becomes progress events, and a stop request aborts it."""

from __future__ import annotations

import pytest

from bertstudio.core.errors import TaskCancelled
from bertstudio.core.hub import _choose_files, _progress_bar_class, is_hub_id
from bertstudio.core.progress import TaskControl


def test_byte_progress_is_reported_as_fraction_of_all_files() -> None:
    events = []
    control = TaskControl(on_progress=events.append)
    bar = _progress_bar_class(control, "model.safetensors", index=1, count=2)(total=1000)
    bar.update(500)
    assert events[-1].fraction == pytest.approx(0.75)
    assert "model.safetensors (2/2)" in events[-1].message
    control.request_stop()
    with pytest.raises(TaskCancelled):
        bar.update(100)


def test_safetensors_preferred_over_pickles() -> None:
    files = ["config.json", "model.safetensors", "pytorch_model.bin", "tf_model.h5", "vocab.txt", "README.md"]
    assert _choose_files(files) == ["config.json", "model.safetensors", "vocab.txt"]
    assert "pytorch_model.bin" in _choose_files(["config.json", "pytorch_model.bin"])


@pytest.mark.parametrize(("text", "ok"), [("bert-base-uncased", True), ("dslim/bert-base-NER", True),
                                          ("a b", False), ("../x", False), ("a/b/c", False)])
def test_hub_ids(text: str, ok: bool) -> None:
    assert is_hub_id(text) is ok


def test_bounded_call_gives_up_on_silence_but_not_on_a_slow_download(monkeypatch) -> None:  # noqa: ANN001
    import threading
    import time

    from bertstudio.core.hub import HubStalled, _bounded

    monkeypatch.setenv("BERTSTUDIO_HUB_TIMEOUT", "0.4")
    activity = [time.monotonic()]

    def slow_but_alive() -> str:
        for _ in range(10):
            time.sleep(0.1)
            activity[0] = time.monotonic()  # bytes arrive
        return "done"

    assert _bounded(slow_but_alive, TaskControl(), "downloading", activity) == "done"
    never = threading.Event()
    start = time.monotonic()
    with pytest.raises(HubStalled, match="listing x"):
        _bounded(lambda: never.wait(5), TaskControl(), "listing x")
    assert time.monotonic() - start < 1.5
    never.set()


def test_every_tokenizer_file_the_folder_check_accepts_is_downloaded() -> None:
    from bertstudio.core.hub import WANTED

    for name in ("tokenizer.json", "vocab.txt", "vocab.json", "merges.txt", "spiece.model", "spm.model",
                 "sentencepiece.bpe.model", "tokenizer.model"):
        assert WANTED.match(name), name
