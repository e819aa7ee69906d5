"""The starter suites shipped in resources/suites (sentiment, NER, QA): a `--suite` or the Tests
tab may name one instead of a file."""

from __future__ import annotations

from pathlib import Path

from bertstudio.resources import resource_path


def built_in_suites() -> dict[str, Path]:
    """Name -> file of every starter suite, by name."""
    folder = resource_path("suites")
    return {path.stem: path for path in sorted(folder.glob("*.json"))} if folder.is_dir() else {}


def suite_path(name_or_path: str) -> Path:
    """A file the user named, or (where no such file exists) the starter suite of that name."""
    path = Path(name_or_path).expanduser()
    if path.exists():
        return path
    return built_in_suites().get(name_or_path, path)
