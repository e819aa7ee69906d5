"""Sample texts and demo data shipped with the app (the top-level resources/ folder)."""

from __future__ import annotations

from pathlib import Path

_PACKAGED = Path(__file__).resolve().parent / "_resources"
_SOURCE_TREE = Path(__file__).resolve().parent.parent / "resources"


def resource_path(*parts: str) -> Path:
    """A file under resources/, from a wheel (bertstudio/_resources) or a source checkout."""
    base = _PACKAGED if _PACKAGED.is_dir() else _SOURCE_TREE
    return base.joinpath(*parts)


def examples(name: str) -> list[str]:
    """Lines of resources/examples/<name>.txt, without comments and blank lines."""
    text = resource_path("examples", f"{name}.txt").read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
