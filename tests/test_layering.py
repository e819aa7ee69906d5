"""bertstudio.core must never depend on Qt or on the Qt layers (DESIGN.md)."""

from __future__ import annotations

import ast
from pathlib import Path

FORBIDDEN = ("PySide6", "pyqtgraph", "superqt", "qtpy", "bertstudio.ui", "bertstudio.workers")
CORE = Path(__file__).resolve().parents[1] / "bertstudio" / "core"


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_core_imports_no_qt() -> None:
    offenders = [
        f"{path.relative_to(CORE.parent.parent)} imports {name}"
        for path in CORE.rglob("*.py")
        for name in _imports(path)
        if name.split(".")[0] in FORBIDDEN or any(name.startswith(f) for f in FORBIDDEN)
    ]
    assert CORE.is_dir() and not offenders, offenders
