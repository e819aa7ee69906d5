"""Attention to files: .npz (numpy, exact), CSV with token labels, JSON. Shared by the tab and the CLI."""

from __future__ import annotations

import csv
import os
import stat
import tempfile
from pathlib import Path

import numpy as np

from bertstudio.core.errors import InputError
from bertstudio.core.json_values import dumps
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.attention import AttentionComparison, AttentionResult, check_head

FORMATS = (".npz", ".csv", ".json")
JSON_VALUE_LIMIT = 2_000_000  # above this, JSON on stdout is unreadable: ask for a file or one head


def _not_regular(path: Path) -> InputError | None:
    """What is wrong with `path` as an output file if it exists and is not a regular file (a folder,
    a device such as /dev/full, a pipe), named with the whole path; None otherwise."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):  # a new file; its folder is checked next
        return None
    except OSError as error:
        return _cannot_write(path, error)
    if stat.S_ISDIR(mode):
        return InputError(f"Cannot write '{path}': it is a folder.", hint="Give a file name, e.g. attention.npz.")
    if stat.S_ISREG(mode):
        return None
    kind = ("a pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")
    return InputError(f"Cannot write '{path}': it is {kind}, not a regular file.",
                      hint="Give the name of a new or ordinary .npz, .csv or .json file.")


def check_output(path: Path | str, comparison: bool = False, one_head_norms: bool = False) -> Path:
    """Refuse, before any model is loaded, a file that could not be written: a folder, pipe or
    device given as the file, a wrong extension, a missing or read-only folder. Every message
    names the whole path the user gave (never the `.partial` one we write first)."""
    path = Path(path).expanduser()
    problem = _not_regular(path)
    if problem is not None:
        raise problem
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"Cannot write '{path}': use a .npz, .csv or .json file name.")
    if comparison and suffix == ".csv":
        raise InputError("A comparison cannot be written as CSV.", hint="Use a .npz or .json file name.")
    if one_head_norms and suffix == ".csv":
        raise InputError("One head's CSV holds one matrix: its weights and its norms do not both fit.",
                         hint="Use a .npz or .json file name, or leave out --layer/--head (long CSV).")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.exists():
        raise InputError(f"Cannot write '{path}': the folder '{folder}' does not exist.",
                         hint="Create the folder first, or choose another one.")
    if not folder.is_dir():
        raise InputError(f"Cannot write '{path}': '{folder}' is a file, not a folder.")
    if not os.access(folder, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InputError(f"Cannot write '{path}': permission denied.", hint="Choose a folder you can write to.")
    try:  # os.access says yes to root everywhere, and /proc or a read-only mount still say no
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".bertstudio-probe-"):
            pass
    except OSError as error:
        raise _cannot_write(path, error) from None
    return path


def _cannot_write(path: Path, error: OSError) -> InputError:
    return InputError(f"Cannot write '{path}': {error.strerror or error}.",
                      hint="Choose a folder you can write to (and check the free space).")


def _selection(
    result: AttentionResult, layer: int | None, head: int | None, values: np.ndarray | None = None
) -> np.ndarray:
    """layers x heads x T x T for everything, or 1 x 1 x T x T for one head (of `values`, by
    default the attentions; the norms have the same shape)."""
    values = result.attentions if values is None else values
    if layer is None and head is None:
        return values
    if layer is None or head is None:
        raise InputError("Give both --layer and --head, or neither.")
    check_head(result, layer, head)
    return values[layer : layer + 1, head : head + 1]


def save_npz(
    path: Path,
    result: AttentionResult,
    layer: int | None = None,
    head: int | None = None,
    comparison: AttentionComparison | None = None,
    compress: bool = False,
) -> None:
    """`attentions` (layers x heads x T x T, or 1 x 1 x T x T for one head) and `tokens`; `norms`
    (same shape) when the result has value-weighted norms. Not compressed unless asked: at 512
    tokens compression costs ~6 s for a file only ~12 % smaller.

    With a comparison: `compare_attentions` and `compare_tokens` (model B), and when the
    tokens match `differences` (B - A, same shape as `attentions`), `difference_mean_abs` and
    `difference_max_abs` (layers x heads).
    """
    data = _selection(result, layer, head)
    arrays: dict[str, np.ndarray] = {}
    if result.norms is not None:
        arrays["norms"] = _selection(result, layer, head, result.norms)
    if comparison is not None:
        arrays["compare_attentions"] = _selection(comparison.result, layer, head)
        arrays["compare_tokens"] = np.array(comparison.result.tokens, dtype=str)
        if comparison.diff is not None:
            difference = comparison.diff.difference
            arrays["differences"] = (difference if layer is None or head is None
                                     else difference[layer : layer + 1, head : head + 1])
            arrays["difference_mean_abs"] = comparison.diff.mean_abs
            arrays["difference_max_abs"] = comparison.diff.max_abs
    writer = np.savez_compressed if compress else np.savez
    with open(path, "wb") as stream:  # a stream: given a name not ending in lower-case .npz, numpy appends .npz
        writer(
            stream,
            attentions=data,
            tokens=np.array(result.tokens, dtype=str),
            segment_ids=np.array(result.segment_ids, dtype=np.int64),
            layer=np.array(-1 if layer is None else layer),
            head=np.array(-1 if head is None else head),
            **arrays,  # type: ignore[arg-type]  # numpy's stub types **kwds like allow_pickle
        )


def load_npz(path: Path) -> tuple[np.ndarray, list[str]]:
    with np.load(path) as data:
        return data["attentions"], [str(t) for t in data["tokens"]]


def save_matrix_csv(path: Path, matrix: np.ndarray, query_tokens: list[str], key_tokens: list[str]) -> None:
    """One matrix: a header row of key tokens, then one row per query token."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["query \\ key", *key_tokens])
        for token, row in zip(query_tokens, matrix, strict=True):
            writer.writerow([token, *(repr(float(v)) for v in row)])


def load_matrix_csv(path: Path) -> tuple[np.ndarray, list[str], list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    keys = rows[0][1:]
    queries = [r[0] for r in rows[1:]]
    return np.array([[float(v) for v in r[1:]] for r in rows[1:]], dtype=np.float32), queries, keys


def save_csv(
    path: Path, result: AttentionResult, layer: int | None = None, head: int | None = None,
    control: TaskControl | None = None,
) -> None:
    """One head as a labelled matrix; all heads as long rows (layer, head, query, key, weight).

    All heads at 512 tokens are ~37M rows: written head by head, with progress and a stop check
    between heads."""
    tokens = list(result.tokens)
    if layer is not None or head is not None:
        save_matrix_csv(path, _selection(result, layer, head)[0, 0], tokens, tokens)
        return
    control = control or TaskControl()
    layers, heads, length = result.layers, result.heads, result.length
    keys = [(k, tokens[k]) for k in range(length)]
    norms = result.norms
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["layer", "head", "query_index", "query", "key_index", "key", "weight"]
                        + (["norm"] if norms is not None else []))
        for lay in range(layers):
            for hd in range(heads):
                control.check()
                control.report(f"Writing layer {lay}, head {hd}…", (lay * heads + hd) / (layers * heads))
                for q, row in enumerate(result.attentions[lay, hd]):
                    if norms is None:
                        writer.writerows([lay, hd, q, tokens[q], k, key, repr(value)]
                                         for (k, key), value in zip(keys, row.tolist(), strict=True))
                    else:
                        writer.writerows([lay, hd, q, tokens[q], k, key, repr(value), repr(norm)]
                                         for (k, key), value, norm
                                         in zip(keys, row.tolist(), norms[lay, hd, q].tolist(), strict=True))


def to_json(result: AttentionResult, layer: int | None = None, head: int | None = None) -> dict[str, object]:
    return result.to_json(layer, head)


def check_json_size(result: AttentionResult, layer: int | None, head: int | None) -> None:
    values = _selection(result, layer, head).size * (2 if result.value_norms is not None else 1)
    if values > JSON_VALUE_LIMIT:
        raise InputError(
            f"That is {values:,} attention values: too many for JSON.",
            hint="Choose one head with --layer and --head, or write a .npz file with --out.",
        )


def comparison_json(
    model: str, result: AttentionResult, comparison: AttentionComparison, layer: int | None = None,
    head: int | None = None,
) -> dict[str, object]:
    """The CLI's compare shape: {"model", "result", "compare": {"model", "result", "differences"}}."""
    return {"model": model, "result": to_json(result, layer, head), "compare": comparison.to_json(layer, head)}


def save_json(
    path: Path, result: AttentionResult, layer: int | None = None, head: int | None = None,
    comparison: AttentionComparison | None = None, model: str = "", control: TaskControl | None = None,
) -> None:
    """The CLI's JSON form in a file; all heads of one result are streamed layer by layer
    (progress, stop checks, no second copy of 37M values as Python lists)."""
    if comparison is not None or layer is not None or head is not None:
        data = (to_json(result, layer, head) if comparison is None
                else comparison_json(model, result, comparison, layer, head))
        Path(path).write_text(dumps(data), encoding="utf-8")
        return
    control = control or TaskControl()
    head_part = dumps(to_json_header(result))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(head_part[:-1] + ', "attentions": [')
        for lay in range(result.layers):
            control.check()
            control.report(f"Writing layer {lay}…", lay / result.layers)
            handle.write((", " if lay else "") + dumps(result.attentions[lay].tolist()))
        handle.write("]")
        if result.norms is not None:
            handle.write(', "norms": [')
            for lay in range(result.layers):
                control.check()
                handle.write((", " if lay else "") + dumps(result.norms[lay].tolist()))
            handle.write("]")
        handle.write("}")


def to_json_header(result: AttentionResult) -> dict[str, object]:
    """Everything of `result.to_json()` but the attentions."""
    data = result.to_json(0, 0)
    for key in ("layer", "head", "attention", "norms", "qk"):
        data.pop(key, None)
    return data


def save(
    path: Path, result: AttentionResult, layer: int | None = None, head: int | None = None,
    comparison: AttentionComparison | None = None, model: str = "", control: TaskControl | None = None,
    compress: bool = False,
) -> None:
    """Write by extension: .npz (compressed only when asked), .csv or .json (a comparison goes
    into .npz and .json only)."""
    path = Path(path).expanduser()
    suffix = path.suffix.lower()
    problem = _not_regular(path)
    if problem is not None:
        raise problem
    if suffix not in FORMATS:
        raise InputError(f"Cannot write '{path}': use a .npz, .csv or .json file name.")
    if comparison is not None and suffix == ".csv":
        raise InputError("A comparison cannot be written as CSV.", hint="Use a .npz or .json file name.")
    # written next to the target and renamed at the end: a cancelled or failed export leaves
    # neither a half file nor a damaged earlier one
    partial = path.with_name(f"{path.stem}.partial{path.suffix}")
    try:
        if suffix == ".npz":
            if control is not None:
                control.report(f"Writing {path.name}…", None)
            save_npz(partial, result, layer, head, comparison, compress)
        elif suffix == ".json":
            save_json(partial, result, layer, head, comparison, model, control)
        else:
            save_csv(partial, result, layer, head, control)
        os.replace(partial, path)
    except OSError as error:  # named as the user's file: the .partial one is ours
        partial.unlink(missing_ok=True)
        raise _cannot_write(path, error) from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    if control is not None:
        control.report(f"Wrote {path.name}", 1.0)


ALL_HEADS_SUFFIX = {"npz-all": ".npz", "csv-all": ".csv", "json": ".json"}


def export_all(path: Path, result: AttentionResult, what: str, control: TaskControl | None = None) -> Path:
    """Every head to one file (the tab's "All heads as…"): run in a worker, it reports and stops."""
    target = Path(path).with_suffix(ALL_HEADS_SUFFIX[what])
    save(target, result, control=control or TaskControl())
    return target
