"""The layers, checked without import-linter too: core and the CLI never depend on Qt, and every
tab module is in the contract that keeps tabs from importing each other (pyproject.toml)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QT = ("PySide6", "pyqtgraph", "superqt", "qtpy", "bertstudio.ui", "bertstudio.workers")


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize(("package", "forbidden"), [("core", QT), ("cli", (*QT, "bertstudio.app"))])
def test_package_imports_no_qt(package: str, forbidden: tuple[str, ...]) -> None:
    folder = ROOT / "bertstudio" / package
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in folder.rglob("*.py")
        for name in _imports(path)
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]
    assert folder.is_dir() and not offenders, offenders


def test_every_tab_is_in_the_independence_contract() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    listed = {m for c in contracts if c["type"] == "independence" for m in c["modules"]}
    tabs = {f"bertstudio.ui.tabs.{p.stem}" for p in (ROOT / "bertstudio" / "ui" / "tabs").glob("*_tab.py")}
    assert tabs and tabs <= listed, sorted(tabs - listed)
