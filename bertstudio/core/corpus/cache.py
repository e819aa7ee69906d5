"""The on-disk cache of corpus indexes: one .npz per (model identity, layer, corpus hash, max length),
written atomically (.partial, then replace), read back only after every array's name, dtype and shape
and the JSON header were checked (never a pickle: allow_pickle=False). A bad file is rebuilt."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bertstudio.core.corpus.index import CorpusIndex

if TYPE_CHECKING:
    from bertstudio.core.models import LoadedModel

FORMAT = 1
ARRAYS = ("line_numbers", "sentences", "vectors", "token_line", "token_index", "spans", "header")


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


def cache_key(loaded: LoadedModel, corpus_bytes: bytes, layer: int, max_length: int) -> str:
    description = {"format": FORMAT, "model": model_identity(loaded), "layer": layer, "max_length": max_length,
                   "corpus": hashlib.sha256(corpus_bytes).hexdigest()}
    return hashlib.sha256(json.dumps(description, sort_keys=True).encode()).hexdigest()[:32]


def save(index: CorpusIndex, path: Path, key: str) -> None:
    import numpy as np

    header = json.dumps({"format": FORMAT, "key": key, "layer": index.layer, "lines": list(index.lines),
                         "tokens": list(index.tokens)}, ensure_ascii=False).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as stream:
        np.savez(stream, line_numbers=index.line_numbers, sentences=index.sentences, vectors=index.vectors,
                 token_line=index.token_line, token_index=index.token_index, spans=index.spans,
                 header=np.frombuffer(header, dtype=np.uint8))
    os.replace(partial, path)


class BadCache(Exception):
    """The cache file is not an index we wrote for this key (partial, corrupt, another version)."""


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise BadCache(what)


def load(path: Path, key: str) -> CorpusIndex:
    """The index stored at `path` for `key`; BadCache naming what is wrong otherwise."""
    import zipfile

    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as data:
            _check(sorted(data.files) == sorted(ARRAYS), "unexpected arrays")
            arrays = {name: data[name] for name in ARRAYS}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError) as error:
        raise BadCache(f"unreadable ({type(error).__name__})") from None
    try:
        header = json.loads(arrays["header"].tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise BadCache("bad header") from None
    _check(isinstance(header, dict) and header.get("format") == FORMAT and header.get("key") == key, "another key")
    lines, tokens, layer = header.get("lines"), header.get("tokens"), header.get("layer")
    _check(isinstance(lines, list) and isinstance(tokens, list) and isinstance(layer, int), "bad header fields")
    _check(all(isinstance(x, str) for x in lines) and all(isinstance(x, str) for x in tokens), "bad header text")
    s, n = len(lines), len(tokens)
    vec, sen = arrays["vectors"], arrays["sentences"]
    _check(vec.dtype == np.float16 and vec.ndim == 2 and vec.shape[0] == n, "bad token vectors")
    _check(sen.dtype == np.float32 and sen.shape == (s, vec.shape[1]), "bad sentence vectors")
    _check(arrays["line_numbers"].dtype == np.int32 and arrays["line_numbers"].shape == (s,), "bad line numbers")
    for name in ("token_line", "token_index"):
        _check(arrays[name].dtype == np.int32 and arrays[name].shape == (n,), f"bad {name}")
    _check(arrays["spans"].dtype == np.int32 and arrays["spans"].shape == (n, 2), "bad spans")
    _check(n == 0 or (0 <= int(arrays["token_line"].min()) and int(arrays["token_line"].max()) < s), "bad lines")
    _check(bool(np.isfinite(vec).all()) and bool(np.isfinite(sen).all()), "non-finite vectors")
    return CorpusIndex(layer=layer, lines=tuple(lines), line_numbers=arrays["line_numbers"], sentences=sen,
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
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as stream:
        np.savez(stream, centroids=layout.centroids, assignment=layout.assignment,
                 header=np.frombuffer(header, dtype=np.uint8))
    os.replace(partial, path)


def load_layout(path: Path, key: str, rows: int, dim: int) -> Any:
    """The stored layout for `key` over `rows` vectors of `dim`, or None when there is none or it does
    not fit (it is then computed again: a bad file never breaks the search)."""
    import zipfile

    import numpy as np

    from bertstudio.core.corpus.search import IvfLayout

    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if sorted(data.files) != ["assignment", "centroids", "header"]:
                return None
            centroids, assignment, header = data["centroids"], data["assignment"], data["header"]
        meta = json.loads(header.tobytes().decode("utf-8"))
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, KeyError, UnicodeDecodeError):
        return None
    lists = centroids.shape[0] if centroids.ndim == 2 else 0
    fits = (isinstance(meta, dict) and meta.get("format") == FORMAT and meta.get("key") == key
            and centroids.dtype == np.float32 and centroids.shape == (lists, dim) and lists > 0
            and assignment.dtype == np.int64 and assignment.shape == (rows,)
            and bool(np.isfinite(centroids).all())
            and (rows == 0 or (int(assignment.min()) >= 0 and int(assignment.max()) < lists)))
    return IvfLayout(centroids, assignment) if fits else None
