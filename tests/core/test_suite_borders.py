"""Issue 40, bounded generated inputs: a template slot is a plain `{name}` (a format spec, conversion,
attribute or index is refused in one line), every input is bounded in characters before it is built,
a suite over the case cap is refused from the counts before expansion (naming the test and what to
shorten), and an MFT `expect` that no case can meet is refused."""

from __future__ import annotations

import time

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.suites.suite import MAX_CASES, parse_suite
from bertstudio.core.suites.templates import MAX_INPUT_CHARS, TemplateError, count_cases, expand, slots


def _mft(template: str, fill: dict[str, list[str]]) -> dict:
    return {"task": "classify", "tests": [{"name": "t", "type": "MFT", "template": template, "fill": fill,
                                           "expect": "positive"}]}


@pytest.mark.parametrize("template", ["the {x:>300000000} sat", "the {x:{x}} sat", "the {x!r} sat",
                                      "the {x.upper} sat", "the {x[0]} sat", "the {0} sat", "the {} sat"])
def test_a_slot_that_is_not_a_plain_name_is_refused_in_one_line(template: str) -> None:
    with pytest.raises(InputError, match=r"field 'template'.*write a slot as \{name\}"):
        parse_suite(_mft(template, {"x": ["cat"]}))


def test_a_format_spec_never_builds_its_input() -> None:
    """The old reader passed `{x:>300000000}` to str.format: a 300 MB input (17 GB peak)."""
    started = time.monotonic()
    with pytest.raises(TemplateError, match="format spec"):
        expand(["the {x:>300000000} sat"], {"x": ["cat"]})
    assert time.monotonic() - started < 1.0


def test_literal_braces_and_plain_slots_are_filled_by_concatenation() -> None:
    assert slots("{{lit}} {x} and {y} {x}") == ["x", "y"]
    assert expand(["{{lit}} {x}", "{x}!"], {"x": ["a", "b"]}) == [("{lit} a", "a!"), ("{lit} b", "b!")]


def test_an_input_longer_than_the_bound_is_refused_before_it_is_built() -> None:
    with pytest.raises(TemplateError, match="characters"):
        expand(["{x} {y}"], {"x": ["a" * (MAX_INPUT_CHARS // 2)], "y": ["b" * (MAX_INPUT_CHARS // 2)]})
    literal = {"task": "classify", "tests": [{"name": "t", "type": "MFT", "inputs": ["a" * 16_000_000],
                                              "expect": "positive"}]}
    with pytest.raises(InputError, match="field 'inputs'.*16,000,000 characters"):
        parse_suite(literal)


def test_cases_are_counted_from_the_fill_sizes() -> None:
    assert count_cases(["{a} {b}", "{a}"], {"a": ["1", "2", "3"], "b": ["x", "y"]}) == 6


def test_a_suite_of_two_million_cases_is_refused_at_once_naming_its_fill_lists() -> None:
    """Each test is under the one-template cap; together 1.96M cases (the old reader built them
    all, 51 s, then hinted at fill lists)."""
    tests = [{"name": f"t{i}", "type": "MFT", "template": "the {x} {y}", "fill": {"x": ["a"] * 140, "y": ["b"] * 140},
              "expect": "positive"} for i in range(100)]
    started = time.monotonic()
    with pytest.raises(InputError, match="1,960,000 cases") as caught:
        parse_suite({"task": "classify", "tests": tests})
    assert time.monotonic() - started < 1.0
    assert "'t0'" in caught.value.hint and "fill lists" in caught.value.hint


def test_cases_from_inputs_and_samples_get_their_own_hint() -> None:
    test = {"name": "many", "type": "INV", "inputs": ["John lives here"] * (MAX_CASES // 10), "perturb": "names",
            "samples": 20}
    started = time.monotonic()
    with pytest.raises(InputError, match="cases") as caught:
        parse_suite({"task": "classify", "tests": [test]})
    assert time.monotonic() - started < 1.0
    assert "its inputs or its 'samples'" in caught.value.hint and "fill" not in caught.value.hint


def test_a_choice_number_past_the_choices_is_refused() -> None:
    suite = {"task": "multiple-choice", "tests": [{"name": "t", "type": "MFT", "inputs": [["q", "a", "b", "c"]],
                                                   "expect": 7}]}
    with pytest.raises(InputError, match="field 'expect': 7 is not a choice"):
        parse_suite(suite)
    suite["tests"][0]["expect"] = 2
    assert parse_suite(suite).cases == 1


def test_the_characters_a_suite_makes_are_bounded_before_they_are_built() -> None:
    """100,000 cases of 100,000 characters each were within the case and input bounds: 10 GB."""
    with pytest.raises(TemplateError, match="characters in all"):
        expand(["{x} {y}"], {"x": ["a" * 40_000] * 100, "y": ["b" * 40_000] * 100})
    perturbed = {"task": "classify", "tests": [{"name": "t", "type": "INV", "inputs": ["John " + "x" * 90_000] * 800,
                                                "perturb": "names", "samples": 100}]}
    started = time.monotonic()
    with pytest.raises(InputError, match="characters of perturbed inputs"):
        parse_suite(perturbed)
    assert time.monotonic() - started < 1.0
