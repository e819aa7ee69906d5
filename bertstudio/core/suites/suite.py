"""The suite file: read once, checked field by field, expanded into cases.

{"task": "classify", "tests": [{"name", "type": "MFT"|"INV"|"DIR", ...}]} (see README, Tests).
Every problem is one InputError naming the test and the field, before any model loads.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bertstudio.core.errors import InputError
from bertstudio.core.suites.perturb import DEFAULT_PART, PERTURBATIONS, perturbed
from bertstudio.core.suites.sizes import refuse_too_many
from bertstudio.core.suites.tasks import Case, part_index, suite_specs
from bertstudio.core.suites.templates import MAX_INPUT_CHARS, TemplateError, expand, slots
from bertstudio.core.tasks.spec import SuiteAdapter

TYPES = ("MFT", "INV", "DIR")
MAX_TESTS = 500
MAX_CASES = 100_000  # all tests together
MAX_SAMPLES = 100
MAX_SUITE_BYTES = 20 * 1024 * 1024
KNOWN_FIELDS = frozenset({"name", "type", "capability", "description", "inputs", "template", "fill", "expect",
                          "pairs", "perturb", "seed", "samples", "on", "label", "direction", "tolerance"})


@dataclass(frozen=True)
class TestCase:
    """One case: an input (MFT) or an input and its changed form (INV, DIR)."""

    original: Case
    perturbed: Case | None = None
    expect: Any = None  # MFT: the expected label / answer / choice


@dataclass(frozen=True)
class SuiteTest:
    name: str
    type: str  # MFT, INV, DIR
    cases: tuple[TestCase, ...]
    capability: str = ""
    description: str = ""
    label: str | None = None  # DIR: the class whose probability should move
    direction: str = "up"  # DIR
    tolerance: float = 0.0  # DIR
    __test__ = False  # pytest: not a test class


@dataclass(frozen=True)
class Suite:
    task: str  # spec key
    tests: tuple[SuiteTest, ...]
    name: str = ""
    path: str = ""
    notes: tuple[str, ...] = field(default=())
    mask_model: str = ""  # the masked LM the suite names for `{mask}` ("mask_model")
    masks: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)  # test -> words `{mask}` took

    @property
    def cases(self) -> int:
        return sum(len(t.cases) for t in self.tests)


class _Where:
    """Builds the messages that name the test and the field."""

    def __init__(self, source: str, index: int, name: str | None) -> None:
        self.test = f"test '{name}'" if name else f"test {index + 1}"
        self.source = source

    def error(self, field_name: str, problem: str, hint: str = "") -> InputError:
        return InputError(f"{self.source}: {self.test}, field '{field_name}': {problem}.", hint=hint)


def read_suite(path: str | Path, masks: Mapping[str, Sequence[str]] | None = None) -> Suite:
    """A suite file (JSON; .yaml/.yml where PyYAML is installed), checked and expanded; `masks`: the
    words each test's `{mask}` takes (core.suites.masks suggests them)."""
    path = Path(path).expanduser()
    return parse_suite(read_suite_data(path), path.name, str(path), masks)


def read_suite_data(path: str | Path) -> Any:
    """A suite file's JSON value, unchecked (what `{mask}` suggestions read before the suite is built)."""
    from bertstudio.core.datafiles import parse_json
    from bertstudio.core.files import read_text

    path = Path(path).expanduser()
    text = read_text(path, "suite file", MAX_SUITE_BYTES)
    if path.suffix.lower() in {".yaml", ".yml"}:
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            raise InputError(f"{path.name} is YAML, and PyYAML is not installed.",
                             hint="Write the suite as JSON, or pip install pyyaml.") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise InputError(f"{path.name} is not valid YAML ({error}).") from None
    else:
        data = parse_json(text, path.name)
    return data


def suite_task(data: Any) -> str:
    """The task key a suite's JSON value names, or "" (read leniently: parse_suite reports the problem)."""
    from bertstudio.core.tasks.spec import spec_for_command

    name = data.get("task") if isinstance(data, Mapping) else None
    try:
        return spec_for_command(name).key if isinstance(name, str) else ""
    except ValueError:
        return ""


def parse_suite(data: Any, source: str = "the suite", path: str = "",
                masks: Mapping[str, Sequence[str]] | None = None) -> Suite:
    """A suite from its JSON value; `source` names it in messages; `masks`: the words of each test's `{mask}`."""
    if not isinstance(data, Mapping):
        raise InputError(f"{source} must be a JSON object with 'task' and 'tests'.")
    unknown = sorted(set(data) - {"task", "tests", "name", "description", "mask_model", "mask_top_k"})
    if unknown:
        raise InputError(f"{source}: unknown field '{unknown[0]}' at the top level.",
                         hint="A suite has 'task', 'tests' and optionally 'name', 'description', 'mask_model' "
                              "and 'mask_top_k'.")
    mask_model = data.get("mask_model", "")
    if not isinstance(mask_model, str):
        raise InputError(f"{source}: field 'mask_model' must be a model (a Hub id or a folder).")
    chosen = {name: tuple(words) for name, words in (masks or {}).items()}
    key = suite_task(data)
    testable = {spec.key: spec for spec in suite_specs()}
    if key not in testable:
        raise InputError(f"{source}: field 'task' is {data.get('task')!r}, which suites do not test.",
                         hint="Use one of: " + ", ".join(spec.cli_name for spec in testable.values()) + ".")
    task = testable[key].suite
    assert task is not None
    tests = data.get("tests")
    if not isinstance(tests, list) or not tests:
        raise InputError(f"{source}: field 'tests' must be a non-empty list of tests.")
    if len(tests) > MAX_TESTS:
        raise InputError(f"{source} has {len(tests)} tests, more than the {MAX_TESTS} a suite may have.")
    refuse_too_many(tests, source, MAX_CASES, chosen)  # counted from the lists, before a single case is built
    built: list[SuiteTest] = []
    names: set[str] = set()
    total = 0
    for index, raw in enumerate(tests):
        test = _test(task, raw, _Where(source, index, raw.get("name") if isinstance(raw, Mapping) else None), chosen)
        if test.name in names:
            raise InputError(f"{source}: two tests are named '{test.name}'.", hint="Give each test its own name.")
        names.add(test.name)
        total += len(test.cases)
        if total > MAX_CASES:
            raise InputError(f"{source} makes more than {MAX_CASES:,} cases.", hint="Shorten the fill lists.")
        built.append(test)
    name = data["name"] if isinstance(data.get("name"), str) else Path(path or source).stem
    used = {t.name: chosen[t.name] for t in built if t.name in chosen}
    return Suite(key, tuple(built), name, path, mask_model=mask_model, masks=used)


def _test(task: SuiteAdapter, raw: Any, where: _Where,
          masks: Mapping[str, Sequence[str]] | None = None) -> SuiteTest:
    kind = _checked_kind(raw, where)
    common = {"name": raw["name"].strip(), "type": kind, "capability": _text(raw, "capability", where),
              "description": _text(raw, "description", where)}
    if kind == "MFT":
        return _mft_test(task, raw, where, masks, common)
    if "expect" in raw:
        raise where.error("expect", f"an {kind} test compares predictions; 'expect' belongs to MFT tests")
    if "pairs" in raw:
        _refuse(raw, ("perturb", "seed", "samples", "on"), where,
                "this field goes with 'inputs' + 'perturb', not with 'pairs'")
        cases = _pairs(task, raw["pairs"], where)
    else:
        cases = _perturbed(task, raw, [case for case, _ in _originals(task, raw, where, None, masks)], where)
    if not cases:
        raise where.error("perturb", "the perturbation changed none of the inputs (nothing to test)",
                          hint="Give inputs it applies to (a name for 'names', a number for 'numbers').")
    if kind == "INV":
        _refuse(raw, ("label", "direction", "tolerance"), where,
                "an INV test does not use this field (it belongs to DIR)")
        return SuiteTest(cases=tuple(cases), **common)
    if not task.labelled:
        raise where.error("type", "DIR tests read a class probability, which this task does not give",
                          hint="Use MFT or INV for this task.")
    label = raw.get("label")
    if not isinstance(label, str) or not label:
        raise where.error("label", "a DIR test needs the label whose probability should move")
    direction = raw.get("direction", "up")
    if direction not in ("up", "down"):
        raise where.error("direction", f"{direction!r} is not 'up' or 'down'")
    tolerance = raw.get("tolerance", 0)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not (
            math.isfinite(tolerance) and 0 <= tolerance <= 1):
        raise where.error("tolerance", f"{tolerance!r} is not a probability difference between 0 and 1")
    return SuiteTest(cases=tuple(cases), label=label, direction=direction, tolerance=float(tolerance), **common)


def _checked_kind(raw: Any, where: _Where) -> str:
    """The test's type, once the fields every test shares are checked (a name, one source of inputs)."""
    if not isinstance(raw, Mapping):
        raise where.error("tests", "each test must be a JSON object")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise where.error("name", "every test needs a name (a non-empty string)")
    unknown = sorted(set(raw) - KNOWN_FIELDS)
    if unknown:
        raise where.error(unknown[0], "this field is not one a test has",
                          hint="Fields: " + ", ".join(sorted(KNOWN_FIELDS)) + ".")
    kind = raw.get("type")
    if kind not in TYPES:
        raise where.error("type", f"{kind!r} is not a test type", hint="Use MFT, INV or DIR.")
    sources = [f for f in ("inputs", "template", "pairs") if f in raw]
    if len(sources) != 1:
        needs = "'inputs' or 'template'" if kind == "MFT" else "'pairs', or 'inputs'/'template' with 'perturb'"
        raise where.error(sources[1] if sources else "inputs", f"give exactly one of {needs}")
    if kind == "MFT" and "pairs" in raw:
        raise where.error("pairs", "an MFT test checks single inputs; give 'inputs' or 'template'")
    if "fill" in raw and "template" not in raw:
        raise where.error("fill", "'fill' fills a 'template', and this test has none")
    return str(kind)


def _mft_test(task: SuiteAdapter, raw: Mapping[str, Any], where: _Where, masks: Mapping[str, Sequence[str]] | None,
              common: dict[str, Any]) -> SuiteTest:
    _refuse(raw, ("perturb", "label", "direction", "tolerance"), where, "an MFT test does not use this field")
    if "expect" not in raw:
        raise where.error("expect", "an MFT test needs the answer every case should get")
    expect = _expect(task, raw["expect"], where)
    found = _originals(task, raw, where, expect, masks)
    problem = next((p for case, answer in found if task.expected_in is not None
                    for p in [task.expected_in(case, answer)] if p), "")
    if problem:
        raise where.error("expect", problem)
    return SuiteTest(cases=tuple(TestCase(case, None, answer) for case, answer in found), **common)


def _refuse(raw: Mapping[str, Any], fields: Sequence[str], where: _Where, why: str) -> None:
    """The first of `fields` the test has is an error: it belongs to another kind of test."""
    banned = next((f for f in fields if f in raw), None)
    if banned is not None:
        raise where.error(banned, why)


def _text(raw: Mapping[str, Any], name: str, where: _Where) -> str:
    value = raw.get(name, "")
    if not isinstance(value, str):
        raise where.error(name, "must be a string")
    return value


def _expect(task: SuiteAdapter, value: Any, where: _Where) -> Any:
    """MFT's `expect` as the task checks it (a label, a non-empty string, unless it checks its own)."""
    if task.expected is not None:
        problem = task.expected(value)
    else:
        problem = "" if isinstance(value, str) and value else f"{value!r} is not a label (a string)"
    if problem:
        raise where.error("expect", problem)
    return value


def _item(task: SuiteAdapter, value: Any, where: _Where, field_name: str, position: int) -> list[Any] | None:
    """An input's parts: a string (the first part), a list of strings (every part) or an object by part
    names; None: none of these."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return value
    if not isinstance(value, Mapping):
        return None
    unknown = [k for k in value if k not in task.parts]
    if unknown:
        raise where.error(field_name, f"item {position + 1} names the part '{unknown[0]}'",
                          hint="Parts of this task: " + ", ".join(task.parts) + ".")
    return [value.get(p, "") for p in task.parts[:max(task.parts.index(k) for k in value) + 1]] if value else []


def _case(task: SuiteAdapter, value: Any, where: _Where, field_name: str, position: int) -> Case:
    """One input, read as the task reads one (`read_item`), else by `_item`."""
    found = task.read_item(value) if task.read_item is not None else _item(task, value, where, field_name, position)
    if found is None:
        raise where.error(field_name, f"item {position + 1} is not a text or a list of texts")
    parts: list[Any] = found
    if not all(isinstance(p, str) for p in parts):
        raise where.error(field_name, f"item {position + 1} has a part that is not a string")
    if not parts or not parts[0].strip():
        raise where.error(field_name, f"item {position + 1} is empty")
    longest = max(len(p) for p in parts)
    if longest > MAX_INPUT_CHARS:
        raise where.error(field_name, f"item {position + 1} has a part of {longest:,} characters, more than "
                                      f"{MAX_INPUT_CHARS:,}", hint="Shorten it: a model reads a few hundred words.")
    if len(parts) < task.min_parts or (task.max_parts is not None and len(parts) > task.max_parts):
        count = f"{task.min_parts}" + ("" if task.max_parts == task.min_parts else
                                       f" to {task.max_parts}" if task.max_parts else " or more")
        raise where.error(field_name, f"item {position + 1} has {len(parts)} part(s); this task needs {count} "
                          f"({', '.join(task.parts)})")
    while len(parts) > task.min_parts and not parts[-1].strip():  # an empty optional part (a pair) is none
        parts = parts[:-1]
    return tuple(parts)


def _originals(task: SuiteAdapter, raw: Mapping[str, Any], where: _Where, expect: Any,
               masks: Mapping[str, Sequence[str]] | None = None) -> list[tuple[Case, Any]]:
    """The test's inputs (templates expanded), each with its expected answer: `expect` itself, or
    (a string expectation of a template) `expect` with the case's slots filled in."""
    if "inputs" in raw:
        items = raw["inputs"]
        if not isinstance(items, list) or not items:
            raise where.error("inputs", "must be a non-empty list")
        if len(items) > MAX_CASES:
            raise where.error("inputs", f"more than {MAX_CASES:,} inputs")
        return [(_case(task, item, where, "inputs", i), expect) for i, item in enumerate(items)]
    template, fill = raw["template"], raw.get("fill", {})
    templates = [template] if isinstance(template, str) else template
    if not isinstance(templates, list) or not templates or not all(isinstance(t, str) for t in templates):
        raise where.error("template", "must be a string, or a list of strings (one per part)")
    if not isinstance(fill, Mapping) or not all(
            isinstance(v, list) and all(isinstance(w, str) for w in v) for v in fill.values()):
        raise where.error("fill", "must map each slot to a list of strings")
    fill = _with_mask(templates, fill, where, raw["name"].strip(), masks)
    slotted = isinstance(expect, str)
    try:
        rows = expand([*templates, *([expect] if slotted else [])], fill)
    except TemplateError as error:
        raise where.error("template", str(error)) from None
    width = len(templates)
    return [(_case(task, list(row[:width]), where, "template", i), row[width] if slotted else expect)
            for i, row in enumerate(rows)]


def _with_mask(templates: list[str], fill: Mapping[str, Any], where: _Where, name: str,
               masks: Mapping[str, Sequence[str]] | None) -> Mapping[str, Any]:
    """`fill` with the masked LM's words for `{mask}` where the template uses it and `fill` has no list."""
    from bertstudio.core.suites.masks import MASK

    try:
        used = any(MASK in slots(t) for t in templates)
    except TemplateError as error:
        raise where.error("template", str(error)) from None
    if not used or MASK in fill:
        return fill
    words = (masks or {}).get(name)
    if not words:
        raise where.error("template", "{mask} is filled by a masked LM's suggestions, and none was chosen",
                          hint="Name one in the suite ('mask_model'), with check --mask-model, or in the Tests "
                               "tab; or give 'fill' a 'mask' list.")
    return {**fill, MASK: list(words)}


def _pairs(task: SuiteAdapter, items: Any, where: _Where) -> list[TestCase]:
    if not isinstance(items, list) or not items:
        raise where.error("pairs", "must be a non-empty list of [original, changed] pairs")
    if len(items) > MAX_CASES:
        raise where.error("pairs", f"more than {MAX_CASES:,} pairs")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, list) or len(item) != 2:
            raise where.error("pairs", f"item {i + 1} is not a pair [original, changed]")
        out.append(TestCase(_case(task, item[0], where, "pairs", i), _case(task, item[1], where, "pairs", i)))
    return out


def _perturbed(task: SuiteAdapter, raw: Mapping[str, Any], originals: list[Case], where: _Where) -> list[TestCase]:
    name = raw.get("perturb")
    if name is None:
        raise where.error("perturb", "inputs of an INV or DIR test need a perturbation (or give 'pairs')",
                          hint="Perturbations: " + ", ".join(PERTURBATIONS) + ".")
    if name not in PERTURBATIONS:
        raise where.error("perturb", f"{name!r} is not a perturbation",
                          hint="Perturbations: " + ", ".join(PERTURBATIONS) + ".")
    seed, samples = raw.get("seed", 0), raw.get("samples", 1)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise where.error("seed", f"{seed!r} is not a whole number")
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise where.error("samples", f"{samples!r} is not a whole number from 1 to {MAX_SAMPLES}")
    on = raw.get("on")
    if on is None:
        part = DEFAULT_PART.get(name, 0)
    elif not isinstance(on, str) or part_index(task, on) is None:
        raise where.error("on", f"{on!r} is not a part of this task's input", hint="Parts: " + ", ".join(task.parts))
    else:
        part = part_index(task, on) or 0
    rng = random.Random(f"{seed}:{name}")  # a string seed hashes the same on every machine and run
    out = []
    for case in originals:
        index = part % len(case) if part < 0 else part
        if index >= len(case):
            raise where.error("on", f"the inputs have no {task.parts[min(index, len(task.parts) - 1)]} to change")
        for new in perturbed(name, case[index], rng, samples):
            out.append(TestCase(case, case[:index] + (new,) + case[index + 1:]))
    return out
