"""Hostile workspace files (issue 17.2): wrong types, wrong nesting, huge values, special files.

The reader either refuses the file with one clear InputError or returns only the fields of the
right shape, every other one named; it never raises anything else.
"""

from __future__ import annotations

import copy
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from bertstudio.core import workspace_file
from bertstudio.core.errors import InputError
from bertstudio.core.workspace_file import FORMAT, VERSION, parse, read, validate

# What the window's tabs write today (as `validate` gets them from MainWindow: each tab's state()).
VIEWS: dict[str, Any] = {
    "fill-mask": {"text": "a [MASK] .", "top_k": 5},
    "nsp": {"sentence_a": "", "sentence_b": "", "rank": False},
    "qa": {"question": "", "context": "", "options": {"top_k": 5, "max_answer_len": 30, "doc_stride": 128,
                                                     "allow_no_answer": False, "null_threshold": 0.0}},
    "attention": {"text": "", "pair": "", "view": {"layer": 0, "heads_shown": [], "focus": None,
                                                              "selected": [[0, 1]]}},
    "evaluate": {"task": "classification", "data": "", "limit": 0, "seed": 0},
}
GOOD: dict[str, Any] = {
    "format": FORMAT, "version": VERSION,
    "window": {"geometry": "AdnQywADAAA=", "state": ""},
    "current": "fill-mask",
    "tabs": {"fill-mask": {"model": "/m", "loaded": "/m", "splitters": [[300, 200]],
                           "view": {"text": "the [MASK] sat", "top_k": 7}},
             "qa": {"model": "", "compare": "", "heads_off": "0:1", "splitter": [1, 2],
                    "view": {"question": "who?", "context": "me", "options": {"top_k": 3, "null_threshold": 0.5}}},
             "attention": {"view": {"text": "x", "view": {"layer": 2, "heads_shown": [1, 2], "focus": [0, 1]}}}},
}


def test_a_good_workspace_passes_whole() -> None:
    checked = validate(copy.deepcopy(GOOD), VIEWS)
    assert checked.problems == ()
    assert checked.data == GOOD
    assert checked.message() == ""


@pytest.mark.parametrize(("where", "value", "named"), [
    (("version",), "x", "version must be a whole number"),
    (("version",), 10**30, "version must be between"),
    (("window",), "evil", "window must be an object"),
    (("window", "geometry"), "not base64 !!", "window.geometry is not the window layout"),
    (("current",), ["fill-mask"], "current must be a text"),
    (("tabs",), [], "tabs must be an object"),
    (("tabs", "fill-mask"), [], "tabs.fill-mask must be an object"),
    (("tabs", "fill-mask", "view", "top_k"), "abc", "tabs.fill-mask.view.top_k must be a whole number"),
    (("tabs", "fill-mask", "view", "top_k"), 10**30, "tabs.fill-mask.view.top_k must be between 1 and 1,000"),
    (("tabs", "fill-mask", "view", "top_k"), True, "top_k must be a whole number"),
    (("tabs", "fill-mask", "view", "top_k"), 7.5, "top_k must be a whole number"),
    (("tabs", "fill-mask", "view"), [1, 2], "tabs.fill-mask.view must be an object"),
    (("tabs", "fill-mask", "model"), 5, "tabs.fill-mask.model must be a text"),
    (("tabs", "qa", "compare"), 12, "tabs.qa.compare must be a text"),
    (("tabs", "qa", "view", "options", "null_threshold"), float("inf"), "null_threshold must be a finite number"),
    (("tabs", "qa", "view", "options"), "all", "tabs.qa.view.options must be an object"),
    (("tabs", "fill-mask", "splitters"), [[1, -5]], "splitters[0][1] must be between 0"),
    (("tabs", "fill-mask", "splitters"), [[1]] * 100, "at most 64"),
    (("tabs", "attention", "view", "view", "heads_shown"), list(range(20_000)), "at most 10,000"),
    (("tabs", "attention", "view", "view", "focus"), {"a": {"b": "c"}}, None),  # untyped by the example: kept
    (("tabs", "attention", "view", "view", "selected"), None, None),  # a list may be null (an unset focus is)
    (("tabs", "attention", "view", "view", "selected"), [[0, "x"]], "selected[0][1] must be a whole number"),
    (("tabs", "fill-mask", "pins"), [{"label": "pinned", "view": {"text": "a [MASK] .", "top_k": 5}}], None),
    (("tabs", "fill-mask", "pins"), [{"label": "pinned", "view": {"text": 5}}], "pins[0].view.text must be a text"),
    (("tabs", "fill-mask", "pins"), [{"label": "x", "view": {}}] * 21, "at most 20"),
    (("tabs", "fill-mask", "pin"), 99, "tabs.fill-mask.pin must be between 0 and 19"),
    (("tabs", "nope"), {}, "tabs.nope: unknown tab"),
    (("extra",), 1, "extra: unknown field"),
])
def test_each_wrong_field_is_named_and_the_rest_kept(where: tuple[str, ...], value: Any, named: str | None) -> None:
    data = copy.deepcopy(GOOD)
    parent = data
    for key in where[:-1]:
        parent = parent[key]
    parent[where[-1]] = value
    checked = validate(data, VIEWS)
    if named is None:
        assert checked.problems == () and checked.data == data
        return
    assert len(checked.problems) == 1 and named in checked.problems[0], checked.problems
    assert named in checked.message()
    expected = copy.deepcopy(GOOD)  # everything else is kept, exactly
    parent = expected
    for key in where[:-1]:
        parent = parent[key]
    parent.pop(where[-1], None)
    assert checked.data == expected


def test_many_problems_make_one_message() -> None:
    data = copy.deepcopy(GOOD)
    data["tabs"].update({f"unknown-{n}": {} for n in range(20)})
    checked = validate(data, VIEWS)
    assert len(checked.problems) == 20
    message = checked.message()
    assert message.startswith("The workspace had 20 wrong fields") and "and 12 more" in message
    assert "\n" not in message


def _mutate(value: Any, rng: random.Random, depth: int = 0) -> Any:
    """Replace one node of `value` (somewhere inside) by something of another type or size."""
    hostile = [None, True, 0, -1, 10**30, -(10**30), 1e308, float("nan"), "x" * 1000, "", [], {}, [[[]]],
               {"a": {"b": {}}}, [1, "a", None], "AdnQ", 3.5, list(range(50))]
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(list(value))
        value = dict(value)
        value[key] = _mutate(value[key], rng, depth + 1)
        if rng.random() < 0.1:
            value[f"new-{rng.randrange(100)}"] = rng.choice(hostile)
        return value
    if isinstance(value, list) and value and rng.random() < 0.6:
        index = rng.randrange(len(value))
        value = list(value)
        value[index] = _mutate(value[index], rng, depth + 1)
        return value
    return copy.deepcopy(rng.choice(hostile))


def _conforms(value: Any, example: Any) -> bool:
    """`value` has the example's JSON type (ints for floats allowed), recursively for objects."""
    if isinstance(example, bool):
        return isinstance(value, bool)
    if isinstance(example, int | float):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if isinstance(example, str):
        return isinstance(value, str)
    if isinstance(example, dict):
        return isinstance(value, dict) and all(k in example and _conforms(v, example[k]) for k, v in value.items())
    return True


def test_fuzzed_workspaces_never_raise_and_keep_only_valid_fields() -> None:
    rng = random.Random(1729)
    for _round in range(3000):
        data = GOOD
        for _ in range(rng.randint(1, 4)):
            data = _mutate(data, rng)
        checked = validate(data, VIEWS)
        clean = checked.data
        assert validate(clean, VIEWS).problems == ()  # what is kept is valid as a whole
        json.dumps(clean, allow_nan=False)  # and plain, finite JSON
        for key, tab in clean.get("tabs", {}).items():
            assert key in VIEWS
            assert _conforms(tab.get("view", {}), VIEWS[key]), tab
        if not checked.problems:  # nothing named: nothing left out
            assert clean == data


def _workspace_text(inner: str) -> str:
    return f'{{"format": "{FORMAT}", "version": 1, "tabs": {{"fill-mask": {{"view": {inner}}}}}}}'


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 100_000 + "1" + "}" * 100_000,
    _workspace_text("[" * 80 + "]" * 80),  # parses, but deeper than MAX_JSON_DEPTH
])
def test_deep_nesting_is_refused_with_a_message(text: str) -> None:
    with pytest.raises(InputError, match="nested more than 64 levels"):
        parse(text)


@pytest.mark.parametrize(("text", "named"), [
    ('{"format": "' + FORMAT + '", "tabs": {}, "n": ' + "9" * 100_000 + "}", "number too long"),
    ("{not json", "not valid JSON"),
    ("[]", "not a BERT Studio workspace"),
    (json.dumps({"format": "other", "tabs": {}}), "not a BERT Studio workspace"),
    (json.dumps({"format": FORMAT, "version": VERSION + 1}), "newer BERT Studio"),
])
def test_files_that_are_no_workspace_are_refused(text: str, named: str) -> None:
    with pytest.raises(InputError, match=named):
        parse(text)


def test_special_and_huge_files_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="pipe"):
        read(fifo)  # would block for ever if it were opened
    with pytest.raises(InputError, match="folder"):
        read(tmp_path)
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match="UTF-8"):
        read(binary)
    big = tmp_path / "big.json"
    big.write_text(json.dumps(GOOD), encoding="utf-8")
    monkeypatch.setattr(workspace_file, "MAX_WORKSPACE_BYTES", 100)
    with pytest.raises(InputError, match="at most"):
        read(big)
    monkeypatch.undo()
    assert read(big) == GOOD
