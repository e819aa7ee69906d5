"""Every third-party module the package imports is declared in pyproject; nothing declared is unused
(DESIGN.md, Conventions). `datasets` was declared and never imported, `scipy` imported and not declared."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Imported only inside `try: ... except ImportError` with a message, or an optional extra.
OPTIONAL = {"umap": "the projector extra (umap-learn)", "yaml": "YAML suite files (PyYAML; JSON works without)"}
# Declared, never imported by us: what a library we call loads at run time.
RUNTIME_ONLY = {"accelerate": "transformers' Trainer requires it",
                "tensorboard": "Trainer's report_to writes the event files of every run with it"}


def _name(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def imported_modules(root: Path = ROOT / "bertstudio") -> set[str]:
    """Top-level names of every absolute import in the package, standard library left out."""
    found: set[str] = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"bertstudio", "__future__"}


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {_name(re.split(r"[<>=!~;\[ ]", spec, maxsplit=1)[0]) for spec in project["dependencies"]}


def test_every_imported_module_is_declared_and_every_declared_one_imported() -> None:
    providers = importlib.metadata.packages_distributions()
    wanted = declared()
    used: set[str] = set()
    undeclared = []
    for module in sorted(imported_modules() - set(OPTIONAL)):
        distributions = {_name(d) for d in providers.get(module, [])}
        if not distributions & wanted:
            undeclared.append(f"{module} (from {', '.join(sorted(distributions)) or 'no installed distribution'})")
        used |= distributions & wanted
    assert not undeclared, f"imported but not declared in pyproject: {undeclared}"
    unused = wanted - used - set(RUNTIME_ONLY)
    assert not unused, f"declared in pyproject but never imported: {sorted(unused)}"


def test_the_check_sees_an_undeclared_import(tmp_path: Path) -> None:
    """The scan itself: absolute imports found, stdlib, relative and own imports left out."""
    (tmp_path / "a.py").write_text("import os\nimport numpy.linalg\nfrom scipy import stats\nfrom . import b\n"
                                   "from bertstudio.core import x\ndef f():\n    import torch\n", encoding="utf-8")
    assert imported_modules(tmp_path) == {"numpy", "scipy", "torch"}
