"""Tokenizing overlapped with the forward (core/encoding.py's Stream, engine.encode_run): every row
encoded exactly as `encode_all` encodes it, results equal to `run`'s in input order, the next chunk
tokenized on a worker while the current chunk's batches run, and Cancel leaves no worker behind."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from bertstudio.core import encoding, engine
from bertstudio.core.errors import TaskCancelled
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import ProgressEvent, TaskControl

WORDS = "the cat sat on a mat and the dog ran fast in the big old house by a river".split()


def _texts(count: int, longest: int = 30, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(n))) for n in rng.integers(1, longest, size=count)]


@pytest.fixture
def loaded(checkpoint_factory):  # noqa: ANN001, ANN201
    return load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))


def _read(stream: encoding.Stream) -> list[tuple[encoding.Encoded, np.ndarray]]:
    return list(stream.chunks())


@pytest.mark.parametrize("chunk", [1, 3, 7, 1000])
def test_a_stream_encodes_every_row_as_encode_all(loaded, chunk: int) -> None:  # noqa: ANN001
    limit = loaded.info.max_length
    texts = _texts(17) + ["dog " * (limit + 3), "cat " * (limit - 2)]
    pairs: list[str | None] = [None if i % 4 else f"pair {i} " * (i % 5) for i in range(len(texts))]
    expected = engine.encode_all(loaded, texts, pairs, offsets=True, special_tokens=True)
    stream = encoding.Stream(loaded, texts, pairs, chunk=chunk, offsets=True, special_tokens=True)
    chunks = _read(stream)
    assert stream.encoded() == expected
    assert expected.cut == (17,)  # the long row only: one at the limit exactly is not cut
    assert sorted(np.concatenate([where for _, where in chunks]).tolist()) == list(range(len(texts)))
    assert len(chunks) == -(-len(texts) // chunk)
    sizes = [max(len(texts[i]) + len(pairs[i] or "") for i in where) for _, where in chunks]
    assert sizes == sorted(sizes, reverse=True)  # longest texts first, chunk by chunk


def test_encoded_before_every_chunk_is_read_is_refused(loaded) -> None:  # noqa: ANN001
    stream = encoding.Stream(loaded, _texts(5), chunk=2)
    with pytest.raises(RuntimeError, match="before every chunk"):
        stream.encoded()


def test_a_batch_size_over_the_chunk_gets_its_whole_batches(loaded, monkeypatch) -> None:  # noqa: ANN001
    """`max_rows` over STREAM_CHUNK: the chunks grow to it, so a batch is never cut to a chunk's rows."""
    monkeypatch.setattr(encoding, "STREAM_CHUNK", 4)
    sizes: list[int] = []

    def forward(batch: engine.Batch):  # noqa: ANN202
        sizes.append(len(batch.rows))
        return engine.logits(batch, loaded.model)

    engine.encode_run(loaded, _texts(30), None, forward, budget=100_000, max_rows=10)
    assert sizes == [10, 10, 10]


def test_encode_run_equals_encode_all_then_run_in_input_order(loaded, monkeypatch) -> None:  # noqa: ANN001
    texts = _texts(30)
    pairs: list[str | None] = [None if i % 3 else "a pair" for i in range(30)]
    expected = engine.run_logits(loaded, engine.encode_all(loaded, texts, pairs), budget=80)
    monkeypatch.setattr(encoding, "STREAM_CHUNK", 4)
    chunks: list[int] = []
    encode_rows = encoding._encode_rows
    monkeypatch.setattr(encoding, "_encode_rows", lambda *a: chunks.append(len(a[3])) or encode_rows(*a))
    events: list[ProgressEvent] = []
    encoded, found = engine.encode_run_logits(loaded, texts, pairs, TaskControl(events.append), budget=80)
    np.testing.assert_allclose(found, expected, atol=1e-5)
    assert chunks == [4] * 7 + [2]
    assert encoded == engine.encode_all(loaded, texts, pairs)
    assert events[-1].message == "Scored 30 of 30 rows" and len(events) >= 30 // 4


def test_the_next_chunk_is_tokenized_while_this_one_runs(loaded, monkeypatch) -> None:  # noqa: ANN001
    """The first batch's forward waits until the second chunk's tokenizing has started on the worker:
    without the overlap it would wait forever (here, the 10 s timeout, and the test fails)."""
    second_started = threading.Event()
    threads: list[str] = []
    encode_rows = encoding._encode_rows

    def watched(loaded_, texts, pairs, part, settings):  # noqa: ANN001, ANN202
        threads.append(threading.current_thread().name)
        if len(threads) == 2:
            second_started.set()
        return encode_rows(loaded_, texts, pairs, part, settings)

    monkeypatch.setattr(encoding, "_encode_rows", watched)
    overlapped: list[bool] = []

    def forward(batch: engine.Batch):  # noqa: ANN202
        if not overlapped:
            overlapped.append(second_started.wait(10))
        return engine.logits(batch, loaded.model)

    stream = encoding.Stream(loaded, _texts(12), chunk=4)
    results = engine._run(loaded, stream.chunks(), len(stream), forward, budget=10_000)
    assert overlapped == [True] and len(results) == 12 and all(r is not None for r in results)
    assert len(threads) == 3 and all(name.startswith("tokenize") for name in threads)


def _tokenizing_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("tokenize")}


def test_cancel_mid_run_joins_the_worker_before_the_lock_is_let_go(loaded, monkeypatch) -> None:  # noqa: ANN001
    """The worker tokenizes while the run holds the model lock (another thread cannot take it then), even
    when Cancel lands while it is busy: the run waits for it before letting the lock go. No worker is
    left once the cancelled run has returned."""
    monkeypatch.setattr(encoding, "STREAM_CHUNK", 3)
    before = _tokenizing_threads()
    control = TaskControl()
    lock_taken: list[bool] = []
    second = threading.Event()
    encode_rows = encoding._encode_rows

    def watched(*args):  # noqa: ANN002, ANN202
        lock_taken.append(loaded.lock.acquire(blocking=False))  # on the worker: the run holds it
        if len(lock_taken) == 2:  # the chunk after the first: still busy when the run is cancelled
            second.set()
            for _ in range(500):
                if control.stop_requested:
                    break
                time.sleep(0.01)
            time.sleep(0.2)  # the run has raised meanwhile, and waits here for this chunk
            lock_taken.append(loaded.lock.acquire(blocking=False))
        return encode_rows(*args)

    monkeypatch.setattr(encoding, "_encode_rows", watched)
    calls = 0

    def forward(batch: engine.Batch):  # noqa: ANN202
        nonlocal calls
        calls += 1
        assert second.wait(10)  # Cancel is pressed while the worker tokenizes the next chunk
        control.request_stop()
        return engine.logits(batch, loaded.model)

    with pytest.raises(TaskCancelled):
        engine.encode_run(loaded, _texts(20), None, forward, control, budget=10_000, max_rows=1)
    assert calls == 1 and len(lock_taken) == 3 and not any(lock_taken), lock_taken
    assert _tokenizing_threads() <= before
    free: list[bool] = []
    other = threading.Thread(target=lambda: free.append(loaded.lock.acquire(blocking=False) and
                                                       (loaded.lock.release() or True)))
    other.start()
    other.join()
    assert free == [True]


def test_a_tokenizer_error_on_the_worker_reaches_the_caller(loaded, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(encoding, "STREAM_CHUNK", 3)
    before = _tokenizing_threads()
    threads: list[str] = []

    def broken(*_args: object) -> encoding.Encoded:
        threads.append(threading.current_thread().name)
        raise ValueError("tokenizer broke")

    monkeypatch.setattr(encoding, "_encode_rows", broken)
    with pytest.raises(ValueError, match="tokenizer broke"):
        engine.encode_run_logits(loaded, _texts(7))
    assert threads and threads[0].startswith("tokenize") and _tokenizing_threads() <= before


def test_one_chunk_is_tokenized_on_the_callers_thread(loaded, monkeypatch) -> None:  # noqa: ANN001
    """Nothing to overlap (a Classification batch of a few rows, a search's small sets): no thread for it."""
    threads: list[str] = []
    encode_rows = encoding._encode_rows
    monkeypatch.setattr(encoding, "_encode_rows",
                        lambda *a: threads.append(threading.current_thread().name) or encode_rows(*a))
    texts = _texts(6)
    encoded, found = engine.encode_run_logits(loaded, texts)
    assert threads == [threading.current_thread().name] and len(found) == 6
    assert encoded == engine.encode_all(loaded, texts)
