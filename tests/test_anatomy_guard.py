"""No architecture's module names outside core/anatomy (issue 38 #1): the studio reaches inside a model
only through its anatomy, so a new architecture is one table entry, never a hunt through the code."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from bertstudio.core.anatomy.families import FAMILIES
from bertstudio.core.anatomy.modules import Anatomy

PACKAGE = Path(__file__).resolve().parent.parent / "bertstudio"
ANATOMY = PACKAGE / "core" / "anatomy"
# a branch on an architecture's name: `model_type == "albert"`, `model_type in {...}`, or a model type quoted
QUOTED_TYPE = r"""["'](""" + "|".join(map(re.escape, FAMILIES)) + r""")["']"""
BRANCH = re.compile(r"""model_type\s*(==|!=|\bin\b)\s*[\[{("']|""" + QUOTED_TYPE)


def _module_names() -> set[str]:
    """Every dotted path of the table, and every part of one that is not an ordinary word."""
    found: set[str] = set()
    for family in FAMILIES.values():
        paths = [family.layers, family.query, family.key, family.value, family.qkv, family.output, family.final_norm,
                 *family.feed_forward, *(name.split("+")[0] for recipe in family.masked_lm for name in recipe)]
        for path in filter(None, paths):
            parts = [p for p in path.split(".") if p != "*"]
            if len(parts) > 1:
                found.add(".".join(parts))
            found.update(p for p in parts if "_" in p or p != p.lower())  # q_lin, Wqkv, albert_layers...
    return found - {field.name for field in fields(Anatomy)}  # the anatomy's own API (final_norm) is asked for


def test_no_architecture_module_name_outside_the_anatomy() -> None:
    names = sorted(_module_names(), key=len, reverse=True)
    pattern = re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in names) + r")(?![\w])")
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ANATOMY in path.parents:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            hit = pattern.search(code) or BRANCH.search(code)
            if hit:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{number}: {hit.group(0)!r} in {line.strip()[:100]}")
    assert not found, "ask core/anatomy instead:\n" + "\n".join(found)


def test_the_guard_sees_what_it_forbids() -> None:
    names = _module_names()
    assert {"attention.output.dense", "encoder.layer", "Wqkv", "q_lin", "albert_layers"} <= names
    assert BRANCH.search('if model_type == "albert":') and BRANCH.search("names = {'roberta': 1}")
    assert not BRANCH.search("model_type = config.model_type")
