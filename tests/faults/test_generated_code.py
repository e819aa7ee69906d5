"""Copy as Python never turns a string into code (issue 17 item 1).

A model source, a text or a path may come from a workspace file someone shared. Whatever it
holds, the script must be the statements we wrote, the string only a literal's value: no
line of it may escape into a comment's end, an f-string or a statement of its own.
"""

from __future__ import annotations

import ast
import io
import math
import tokenize
from collections.abc import Callable
from typing import Any

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.snippets import literal, python_snippet
from bertstudio.core.tasks.spec import all_specs, spec_for

HOSTILE = (
    "x\nimport os; os.system('echo owned')",
    "a\r\nprint('cr')\rprint('lone cr')",
    "line\u2028sep\u2029para\x85next\x0cfeed\x0bvtab\x1cfs",
    "nul\x00byte",
    '"""\'\'\' triple """ quotes \'\'\'',
    "back\\slash at the end\\",
    "# a comment\n# and another",
    "{brace} {{double}} {0} {!r} {__import__('os').system('id')}",
    "\\N{BULLET} \\x41 \\u0041 \\",
    "lone \udc80 surrogate",
    "' + __import__('os').system('id') + '",
    "\" + __import__('os').system('id') + \"",
    "f'{__import__(\"os\")}'",
    "')\nimport os\n('",
    "tab\tand\x1b[31mescape",
)


def shapes(s: str) -> list[tuple[str, Any]]:
    """Every input shape the builders take, with `s` in each string slot (paths end in our suffix)."""
    from bertstudio.core.tasks.classification import ClassificationBatchInput, ClassificationInput
    from bertstudio.core.tasks.fill_mask import FillMaskInput
    from bertstudio.core.tasks.multiple_choice import ChoiceInput
    from bertstudio.core.tasks.nsp import NspInput
    from bertstudio.core.tasks.qa import QAInput, QAOptions
    from bertstudio.core.tasks.similarity import SimilarityInput

    return [
        ("fill-mask", {"text": s, "top_k": 3}),
        ("fill-mask", FillMaskInput(s, 4)),
        ("classification", {"text": s}),
        ("classification", ClassificationInput(s, s)),
        ("classification", ClassificationBatchInput((s, s, "x"))),
        ("classification", {"texts": [s], "pair": s}),
        ("classification", ClassificationBatchInput(path=f"/data/{s}.csv", column=s)),
        ("classification", {"path": f"{s}.tsv"}),
        ("classification", {"path": f"{s}.txt"}),
        ("ner", {"text": s, "aggregation": "first"}),
        ("nsp", NspInput(s, (s, s))),
        ("nsp", {"sentence_a": s, "candidates": [s]}),
        ("multiple-choice", ChoiceInput(s, (s, s, s))),
        ("qa", QAInput(s, s, QAOptions(max_answer_len=9))),
        ("qa", {"question": s, "context": s, "options": {"max_answer_len": "12"}}),
        ("attention", {"text": s}),
        ("attention", {"text": s, "pair": s}),
        ("similarity", SimilarityInput(s, (s, s))),
        ("similarity", {"a": s, "bs": [s], "pooling": "cls"}),
    ]


class _Blank(ast.NodeTransformer):
    """Every string constant becomes one placeholder: what remains is the script's shape."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant("S") if isinstance(node.value, str) else node


def shape_of(script: str) -> str:
    return ast.dump(_Blank().visit(ast.parse(script)), include_attributes=False)


def comments(script: str) -> list[str]:
    tokens = tokenize.generate_tokens(io.StringIO(script).readline)
    return [token.string for token in tokens if token.type == tokenize.COMMENT]


def strings(script: str) -> list[str]:
    return [node.value for node in ast.walk(ast.parse(script))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def f_string_text(script: str) -> str:
    """The literal text of every f-string in the script (where a value must never be)."""
    parts = [node for joined in ast.walk(ast.parse(script)) if isinstance(joined, ast.JoinedStr)
             for node in ast.walk(joined) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return "".join(part.value for part in parts)


def test_every_builder_is_covered() -> None:
    """Every spec that writes a script is in `shapes` (a new task's script is tried hostile too)."""
    assert {task for task, _ in shapes("x")} == {key for key, spec in all_specs().items() if spec.script}


@pytest.mark.parametrize("hostile", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_sources_and_texts_are_only_literals(hostile: str) -> None:
    """Same statements as with benign inputs; only literal values differ; comments are ours."""
    benign = shapes("benign")
    for number, (task, inputs) in enumerate(shapes(hostile)):
        script = python_snippet(spec_for(task), hostile, inputs)
        expected = python_snippet(spec_for(task), "benign", benign[number][1])
        where = f"{task} shape {number}"
        assert shape_of(script) == shape_of(expected), where
        assert comments(script) == comments(expected), where
        assert not any(hostile in comment for comment in comments(script)), where
        assert hostile in strings(script), where  # the model source, unchanged: it is a literal
        assert sum(hostile in value for value in strings(script)) >= 2, where  # and the texts too
        assert hostile not in f_string_text(script), where
        compile(script, f"<{where}>", "exec")


def test_the_header_names_only_the_task() -> None:
    script = python_snippet(spec_for("fill-mask"), "evil\nimport os", {"text": "[MASK]"})
    assert script.splitlines()[:3] == ["# BERT Studio: fill-mask", "# pip install torch transformers",
                                       "from transformers import pipeline"]
    assert "MODEL = 'evil\\nimport os'" in script
    assert not any(isinstance(node, ast.Import) and node.names[0].name == "os"
                   for node in ast.walk(ast.parse(script)))


@pytest.mark.parametrize("value", [*HOSTILE, "", 0, -7, 10**30, 1.5, -0.0, True, None,
                                   ["a\nb", ("c", 1)], {"k\n": ["v'"], "n": 2}])
def test_literal_round_trips(value: Any) -> None:
    text = literal(value)
    assert "\n" not in text and "\r" not in text and "\x00" not in text
    assert ast.literal_eval(text) == _listed(value)


def _listed(value: Any) -> Any:
    """`value` as its literal reads back: tuples become lists."""
    if isinstance(value, (list, tuple)):
        return [_listed(item) for item in value]
    if isinstance(value, dict):
        return {key: _listed(item) for key, item in value.items()}
    return value


def test_literal_ignores_a_subclass_repr_and_refuses_what_is_no_literal() -> None:
    class Sneaky(str):
        def __repr__(self) -> str:
            return "__import__('os')"

    assert ast.literal_eval(literal(Sneaky("plain"))) == "plain"
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(InputError):
            literal(bad)
    with pytest.raises(TypeError):
        literal(object())


BAD_COUNTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("fill-mask", lambda v: {"text": "[MASK]", "top_k": v}),
    ("qa", lambda v: {"question": "q", "context": "c", "options": {"max_answer_len": v}}),
]


@pytest.mark.parametrize("task, inputs", BAD_COUNTS)
@pytest.mark.parametrize("value", ["abc", "5; import os", 10**30, 0, -1, True, 2.5, "1e3"])
def test_counts_from_a_workspace_are_checked(task: str, inputs: Callable[[Any], Any], value: Any) -> None:
    with pytest.raises(InputError):
        python_snippet(spec_for(task), "m", inputs(value))


def test_a_count_given_as_digits_is_a_number() -> None:
    script = python_snippet(spec_for("fill-mask"), "m", {"text": "[MASK]", "top_k": " 7 "})
    assert "top_k=7)" in script


@pytest.mark.parametrize("strategy", ["simple')\nimport os\n('", "bogus", 3, ["simple"]])
def test_an_unknown_aggregation_strategy_is_refused(strategy: Any) -> None:
    with pytest.raises(InputError, match="aggregation"):
        python_snippet(spec_for("ner"), "m", {"text": "t", "aggregation": strategy})
