"""The corpus cache is a border (issue 32, items 4, 7-10): a cache file is trusted only for the exact
lines it was built from, a damaged or hostile one (a nested header, a header declaring 10^9 vectors,
a FIFO or a device at its path) is rebuilt with a note naming what was wrong, and a full disk leaves
no partial file behind."""

from __future__ import annotations

import io
import os
import stat
import threading
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from bertstudio.core.corpus import cache, search
from bertstudio.core.corpus.query import encoder_task, index_corpus
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from tests.faults.test_disk_full import small_disk

APPLES = ["apples are red", "an apple a day", "green apples taste sour"]
ZEBRAS = ["zebra runs fast", "stripes on a zebra"]


@pytest.fixture
def loaded(checkpoint_factory):  # noqa: ANN001, ANN201 - LoadedModel
    return load_model(LoadRequest(str(checkpoint_factory("bert", "Model")), encoder_task()))


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def built_once(loaded, tmp_path: Path, lines: list[str] = APPLES) -> tuple[Path, Path]:  # noqa: ANN001
    """(the corpus file, its cache file) after one indexing run."""
    corpus = write_lines(tmp_path / "corpus.txt", lines)
    index_corpus(loaded, corpus, 1, TaskControl(), folder=tmp_path / "cache")
    [target] = [p for p in (tmp_path / "cache").glob("*.npz") if not p.name.endswith(".lists.npz")]
    return corpus, target


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def rewrite(target: Path, **members: bytes | np.ndarray) -> None:
    """The cache file with some members replaced (raw .npy bytes or arrays), the rest kept, stored as
    np.savez stores them."""
    with np.load(target) as data:
        arrays: dict[str, bytes | np.ndarray] = {name: data[name] for name in data.files}
    arrays.update(members)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED) as archive:
        for name, value in arrays.items():
            archive.writestr(f"{name}.npy", value if isinstance(value, bytes) else npy(value))


def test_a_file_changing_while_it_is_read_never_pairs_one_contents_key_with_anothers_lines(
        loaded, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Item 4: the file was read twice (bytes for the key, then lines); changed in between, the
    apples' key held the zebra's lines, served from the cache on every later run."""
    from bertstudio.core import files

    corpus = write_lines(tmp_path / "corpus.txt", APPLES)
    real = files.read_bytes
    calls = []

    def read_then_change(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        data = real(*args, **kwargs)
        if not calls:
            write_lines(corpus, ZEBRAS)  # someone saves the file just after our first read
        calls.append(args)
        return data

    monkeypatch.setattr(files, "read_bytes", read_then_change)
    first, _ = index_corpus(loaded, corpus, 1, TaskControl(), folder=tmp_path / "cache")
    monkeypatch.undo()
    for lines in (APPLES, ZEBRAS):
        write_lines(corpus, lines)
        index, _ = index_corpus(loaded, corpus, 1, TaskControl(), folder=tmp_path / "cache")
        assert index.lines == tuple(lines)
    assert first.lines == tuple(APPLES)


def test_a_cache_whose_lines_are_not_the_files_is_rebuilt(loaded, tmp_path) -> None:  # noqa: ANN001
    """Item 4: what a cache claims to be is compared on load (a cache that an older version wrote
    with another content's lines under this key is not served)."""
    import json

    corpus, target = built_once(loaded, tmp_path)
    with np.load(target) as data:
        header = json.loads(data["header"].tobytes())
    header["lines"] = ["zebra runs fast", *APPLES[1:]]
    rewrite(target, header=np.frombuffer(json.dumps(header).encode(), np.uint8))
    index, notes = index_corpus(loaded, corpus, 1, TaskControl(), folder=tmp_path / "cache")
    assert index.lines == tuple(APPLES)
    assert "rebuilt" in notes[0].text and "not the corpus file's" in notes[0].text
    assert cache.load(target, target.stem).lines == tuple(APPLES)  # the rebuild replaced it


DEEP = 100_000


@pytest.mark.parametrize("member", ["json", "npy"])
def test_a_deeply_nested_header_is_rebuilt(member, loaded, tmp_path) -> None:  # noqa: ANN001
    """Item 7: a 100,000-level nested header was 'internal error: RecursionError' on every run."""
    corpus, target = built_once(loaded, tmp_path)
    if member == "json":
        rewrite(target, header=np.frombuffer(b"[" * DEEP + b"]" * DEEP, np.uint8))
    else:  # the .npy header of the vectors: numpy's own bound refuses it
        deep = "{'descr': '<f2', 'fortran_order': False, 'shape': " + "(" * 3000 + ")" * 3000 + "}"
        rewrite(target, vectors=np.lib.format.magic(2, 0) + len(deep + "\n").to_bytes(4, "little")
                + (deep + "\n").encode())
    index, notes = index_corpus(loaded, corpus, 1, TaskControl(), folder=tmp_path / "cache")
    assert index.lines == tuple(APPLES) and "rebuilt" in notes[0].text
    assert cache.load(target, target.stem).lines == tuple(APPLES)


def test_a_deeply_nested_lists_header_is_computed_again(loaded, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """Item 7, the faiss lists file beside the index: a bad one is recomputed, never a crash."""
    monkeypatch.setattr(search, "EXACT_MAX_ROWS", 4)
    corpus, _ = built_once(loaded, tmp_path)
    [lists_file] = (tmp_path / "cache").glob("*.lists.npz")
    rewrite(lists_file, header=np.frombuffer(b"{" * DEEP, np.uint8))
    index, notes = index_corpus(loaded, corpus, 1, TaskControl(), folder=tmp_path / "cache")
    assert not index.search.exact and any("search lists were unusable" in n.text for n in notes)
    assert cache.load_layout(lists_file, lists_file.name.split(".")[0], *index.vectors.shape) is not None


def test_a_header_declaring_a_billion_vectors_is_refused_before_allocating(loaded, tmp_path) -> None:  # noqa: ANN001
    """Item 9: a ~10 KB file whose .npy header declares (10^9, 384) float16 was 'out of memory' on
    every run and never discarded."""
    corpus, target = built_once(loaded, tmp_path)
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(head, {"descr": "<f2", "fortran_order": False, "shape": (10**9, 384)})
    rewrite(target, vectors=head.getvalue() + b"\0" * 9_000)
    assert target.stat().st_size < 20_000
    with pytest.raises(cache.BadCache, match=r"vectors declares shape \(1000000000, 384\)"):
        cache.load(target, target.stem)
    index, notes = index_corpus(loaded, corpus, 1, TaskControl(), folder=tmp_path / "cache")
    assert index.lines == tuple(APPLES) and "rebuilt" in notes[0].text
    assert cache.load(target, target.stem).vectors.shape == index.vectors.shape  # replaced by a good one


def _blocked_reader_detector(fifo: Path, after_s: float = 8.0) -> list[bool]:
    """[True] once something has held `fifo` open for reading `after_s` seconds (it blocked: the old
    behaviour); that reader is then ended with EOF."""
    blocked: list[bool] = []

    def writer() -> None:
        time.sleep(after_s)
        try:
            if not stat.S_ISFIFO(os.stat(fifo).st_mode):
                return  # replaced by the rebuilt cache: nothing waits on it
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader: nothing blocked
            return
        blocked.append(True)
        os.close(fd)

    threading.Thread(target=writer, daemon=True).start()
    return blocked


@pytest.mark.parametrize("special", ["fifo", "device", "folder"])
def test_a_special_file_at_the_cache_path_is_refused_and_replaced(special, loaded, tmp_path) -> None:  # noqa: ANN001
    """Item 8: a FIFO at the cache path blocked np.load forever; a device or a folder there is not a
    cache either."""
    corpus, target = built_once(loaded, tmp_path)
    target.unlink()
    blocked: list[bool] = []
    if special == "fifo":
        os.mkfifo(target)
        blocked = _blocked_reader_detector(target)
    elif special == "device":
        target.symlink_to("/dev/zero")
    else:
        target.mkdir()
    index, notes = index_corpus(loaded, corpus, 1, TaskControl(), folder=tmp_path / "cache")
    assert index.lines == tuple(APPLES)
    assert "not a regular file" in notes[0].text and "rebuilt" in notes[0].text, notes
    if special == "folder":  # not ours to delete: the index is used uncached
        assert target.is_dir() and "could not be cached" in notes[1].text
    else:
        assert target.is_file() and not target.is_symlink()
        assert cache.load(target, target.stem).lines == tuple(APPLES)
    time.sleep(0.1)
    assert not blocked, "the cache reader blocked on the FIFO"


def test_a_full_disk_leaves_no_partial_cache(loaded, tmp_path) -> None:  # noqa: ANN001
    """Item 10: the disk filled while caching left KEY.npz.partial filling it; the index is still
    used, the note names the reason, and nothing of the cache stays."""
    lines = [f"line {i} has some words about apples and pears number {i}" for i in range(400)]
    corpus = write_lines(tmp_path / "corpus.txt", lines)
    with small_disk(tmp_path / "disk") as disk:
        (disk / "cache").mkdir()
        index, notes = index_corpus(loaded, corpus, 1, TaskControl(), folder=disk / "cache")
        assert len(index.lines) == 400 and index.search is not None
        assert f"could not be cached in '{disk / 'cache'}': No space left" in notes[-1].text, notes
        assert list((disk / "cache").iterdir()) == []
