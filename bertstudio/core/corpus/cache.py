"""The on-disk cache of corpus indexes: one .npz per (model identity, layer, corpus content, max length).

Every cache file (the index and its faiss lists) is read by one reader, `read_npz`, that trusts
nothing in it: a special file (FIFO, device, folder) is refused before it is opened for reading,
only the arrays we write are accepted, each .npy header is parsed with numpy's bounded parser and
checked against the bytes that follow it before anything is allocated (a 10 KB file declaring
10^9 x 384 vectors is refused, not allocated), and the JSON header is parsed without letting its
nesting overflow the stack. A cache is valid only for the exact content it was built from: the
key is computed from the same parsed lines that are indexed (one read of the file), and the file
stores its key, the corpus digest and its lines, compared on load. Writes go to a unique
`.partial` file, renamed over the target at the end and removed on any failure (a full disk
leaves nothing behind). Whatever is wrong is a BadCache naming it; the caller rebuilds."""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core.corpus.index import CorpusIndex
from bertstudio.core.outputs import write_with

if TYPE_CHECKING:
    import numpy as np

    from bertstudio.core.models import LoadedModel

FORMAT = 2  # 2: the corpus digest and line count are stored and checked (1 trusted the key alone)
# name -> (dtype, number of dimensions): the only arrays an index file may hold
ARRAYS: dict[str, tuple[str, int]] = {
    "line_numbers": ("int32", 1), "sentences": ("float32", 2), "vectors": ("float16", 2),
    "token_line": ("int32", 1), "token_index": ("int32", 1), "spans": ("int32", 2), "header": ("uint8", 1)}
LAYOUT_ARRAYS: dict[str, tuple[str, int]] = {"centroids": ("float32", 2), "assignment": ("int64", 1),
                                              "header": ("uint8", 1)}
MAX_NPY_HEADER = 10_000  # bytes of one .npy header (numpy's own bound; ours are ~120)
READ_CHUNK = 16 << 20  # bytes read at once into the allocated array (no second full-size copy)


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/bertstudio/corpus (default ~/.cache/bertstudio/corpus): a folder we create."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "bertstudio" / "corpus"


def model_identity(loaded: LoadedModel) -> dict[str, Any]:
    """The model's folder and every file in it with its size and mtime: new weights -> a new key."""
    folder = Path(loaded.info.folder)
    files = []
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.is_file():
                info = path.stat()
                files.append([path.name, info.st_size, info.st_mtime_ns])
    return {"folder": str(folder), "files": files, "class": type(loaded.model).__name__,
            "dtype": str(next(loaded.model.parameters()).dtype)}


def corpus_digest(lines: Sequence[tuple[int, str]]) -> str:
    """sha256 of the (line number, text) pairs that are indexed: computed from the very lines the
    index is built from, so a file that changes while it is read cannot pair one content's key with
    another's index."""
    return hashlib.sha256(json.dumps(list(lines), ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


def cache_key(loaded: LoadedModel, corpus: str, layer: int, max_length: int) -> str:
    """`corpus`: corpus_digest of the indexed lines."""
    description = {"format": FORMAT, "model": model_identity(loaded), "layer": layer, "max_length": max_length,
                   "corpus": corpus}
    return hashlib.sha256(json.dumps(description, sort_keys=True).encode()).hexdigest()[:32]


class BadCache(Exception):
    """The cache file is not an index we wrote for this key (partial, corrupt, another version)."""


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise BadCache(what)


def save(index: CorpusIndex, path: Path, key: str, corpus: str = "") -> None:
    """`index` at `path` for `key`; `corpus`: its corpus_digest, stored and compared on load."""
    import numpy as np

    header = json.dumps({"format": FORMAT, "key": key, "corpus": corpus, "line_count": len(index.lines),
                         "layer": index.layer, "lines": list(index.lines), "tokens": list(index.tokens)},
                        ensure_ascii=False).encode("utf-8", "surrogatepass")

    def write(stream: Any) -> None:
        np.savez(stream, line_numbers=index.line_numbers, sentences=index.sentences, vectors=index.vectors,
                 token_line=index.token_line, token_index=index.token_index, spans=index.spans,
                 header=np.frombuffer(header, dtype=np.uint8))

    path.parent.mkdir(parents=True, exist_ok=True)
    write_with(path, write)


def read_npz(path: Path, arrays: dict[str, tuple[str, int]]) -> dict[str, np.ndarray]:
    """The arrays of an uncompressed .npz we wrote, each of the dtype and number of dimensions
    `arrays` names; BadCache naming what is wrong otherwise. Nothing is allocated before its
    header was checked against the bytes that follow it."""
    import tokenize
    import zipfile

    try:
        handle = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the open
    except OSError as error:
        raise BadCache(f"unreadable ({error.strerror or error})") from None
    info = os.fstat(handle)
    if not stat.S_ISREG(info.st_mode):
        os.close(handle)
        raise BadCache("not a regular file (a folder, pipe or device)")
    with os.fdopen(handle, "rb") as stream:
        try:
            with zipfile.ZipFile(stream) as archive:
                members = {member.filename: member for member in archive.infolist()}
                _check(sorted(members) == sorted(f"{name}.npy" for name in arrays),
                       f"unexpected arrays ({', '.join(sorted(members))[:80]})")
                return {name: _read_member(archive, members[f"{name}.npy"], name, *spec, info.st_size)
                        for name, spec in arrays.items()}
        # TokenError: numpy reads a .npy header with tokenize, whose C tokenizer (3.12+) refuses deep nesting
        except (OSError, EOFError, ValueError, SyntaxError, RecursionError, tokenize.TokenError, zipfile.BadZipFile,
                NotImplementedError) as error:
            raise BadCache(f"unreadable ({type(error).__name__})") from None


def _read_member(archive: Any, member: Any, name: str, dtype_name: str, ndim: int, file_size: int) -> np.ndarray:
    import zipfile

    import numpy as np
    from numpy.lib import format as npy

    _check(member.compress_type == zipfile.ZIP_STORED, f"{name} is compressed (we never write that)")
    _check(0 <= member.file_size <= file_size, f"{name} claims more bytes than the file holds")
    with archive.open(member) as fp:
        version = npy.read_magic(fp)
        _check(version in {(1, 0), (2, 0)}, f"{name} has .npy version {version}")
        read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, fortran, dtype = read_header(fp, max_header_size=MAX_NPY_HEADER)
        _check(dtype == np.dtype(dtype_name) and not fortran, f"{name} is {dtype}, not {dtype_name}")
        _check(len(shape) == ndim and all(isinstance(n, int) and n >= 0 for n in shape),
               f"{name} has shape {str(shape)[:40]}, not {ndim} dimensions")
        size, left = math.prod(shape) * dtype.itemsize, member.file_size - fp.tell()
        _check(size == left, f"{name} declares shape {shape} ({size:,} bytes) but {left:,} bytes follow")
        array = np.empty(shape, dtype=dtype)
        flat, done = array.reshape(-1).view(np.uint8), 0  # a view: filled in place
        while done < size:
            chunk = fp.read(min(READ_CHUNK, size - done))
            _check(len(chunk) > 0, f"{name} is cut short")
            flat[done:done + len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
            done += len(chunk)
        _check(fp.read(1) == b"", f"{name} is longer than its header says")  # also checks the CRC
    return array


def read_header(array: np.ndarray) -> dict[str, Any]:
    """The JSON object stored as bytes in the `header` array (its nesting cannot overflow the stack)."""
    try:
        header = json.loads(array.tobytes().decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise BadCache("bad header") from None
    _check(isinstance(header, dict) and header.get("format") == FORMAT, "another format")
    return header


def load(path: Path, key: str, lines: Sequence[tuple[int, str]] | None = None) -> CorpusIndex:
    """The index stored at `path` for `key`, built from exactly `lines` (line number, text) when they
    are given; BadCache naming what is wrong otherwise."""
    import numpy as np

    arrays = read_npz(path, ARRAYS)
    header = read_header(arrays["header"])
    _check(header.get("key") == key, "another key")
    texts, tokens, layer = header.get("lines"), header.get("tokens"), header.get("layer")
    if not (isinstance(texts, list) and isinstance(tokens, list) and isinstance(layer, int)):
        raise BadCache("bad header fields")
    _check(all(isinstance(x, str) for x in texts) and all(isinstance(x, str) for x in tokens), "bad header text")
    _check(header.get("line_count") == len(texts), "bad line count")
    if lines is not None:
        _check(header.get("corpus") == corpus_digest(lines), "built from another content of the corpus file")
        _check(texts == [text for _, text in lines]
               and arrays["line_numbers"].tolist() == [number for number, _ in lines],
               "its lines are not the corpus file's")
    s, n = len(texts), len(tokens)
    vec, sen = arrays["vectors"], arrays["sentences"]
    _check(vec.shape[0] == n, "bad token vectors")
    _check(sen.shape == (s, vec.shape[1]), "bad sentence vectors")
    _check(arrays["line_numbers"].shape == (s,), "bad line numbers")
    for name in ("token_line", "token_index"):
        _check(arrays[name].shape == (n,), f"bad {name}")
    _check(arrays["spans"].shape == (n, 2), "bad spans")
    _check(n == 0 or (0 <= int(arrays["token_line"].min()) and int(arrays["token_line"].max()) < s), "bad lines")
    _check(n == 0 or (int(arrays["token_index"].min()) >= 0 and int(arrays["spans"].min()) >= 0
                      and bool((arrays["spans"][:, 0] <= arrays["spans"][:, 1]).all())), "bad token positions")
    _check(bool(np.isfinite(vec).all()) and bool(np.isfinite(sen).all()), "non-finite vectors")
    return CorpusIndex(layer=layer, lines=tuple(texts), line_numbers=arrays["line_numbers"], sentences=sen,
                       vectors=vec, token_line=arrays["token_line"], token_index=arrays["token_index"],
                       spans=arrays["spans"], tokens=tuple(tokens))


# -- the faiss lists of a large index (search.IvfLayout), beside its .npz ------------------------------
def layout_path(index_path: Path) -> Path:
    return index_path.with_name(index_path.stem + ".lists.npz")


def save_layout(layout: Any, path: Path, key: str) -> None:
    """The centroids and every row's list: reloading files the rows straight into their lists (the
    clustering of ~2M token vectors took ~50 s)."""
    import numpy as np

    header = json.dumps({"format": FORMAT, "key": key}).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_with(path, lambda stream: np.savez(stream, centroids=layout.centroids, assignment=layout.assignment,
                                             header=np.frombuffer(header, dtype=np.uint8)))


def load_layout(path: Path, key: str, rows: int, dim: int) -> Any:
    """The stored layout for `key` over `rows` vectors of `dim`; None when there is no file, BadCache
    naming what is wrong when it does not fit (it is then computed again: a bad file never breaks
    the search)."""
    import numpy as np

    from bertstudio.core.corpus.search import IvfLayout

    if not os.path.lexists(path):
        return None
    arrays = read_npz(path, LAYOUT_ARRAYS)
    _check(read_header(arrays["header"]).get("key") == key, "another key")
    centroids, assignment = arrays["centroids"], arrays["assignment"]
    lists = centroids.shape[0]
    _check(centroids.shape == (lists, dim) and lists > 0, f"centroids of shape {centroids.shape}, not (lists, {dim})")
    _check(assignment.shape == (rows,), f"{assignment.shape[0]:,} rows listed, not {rows:,}")
    _check(bool(np.isfinite(centroids).all()), "non-finite centroids")
    _check(rows == 0 or (int(assignment.min()) >= 0 and int(assignment.max()) < lists), "a row in no list")
    return IvfLayout(centroids, assignment)
