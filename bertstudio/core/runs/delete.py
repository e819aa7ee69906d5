"""Deleting a run removes only what BERT Studio created: its model folder and its checkpoints
folder when each carries our marker (core/training/saving.is_ours), then its record.

A folder a later run now occupies (the same output, replaced with --overwrite) belongs to that
run: it is kept while another record names it, and the note says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bertstudio.core.runs import index
from bertstudio.core.training import saving


@dataclass(frozen=True)
class Deleted:
    removed: tuple[str, ...]  # folders deleted
    kept: tuple[str, ...]  # folders left, each with why

    def message(self) -> str:
        parts = [f"Deleted {', '.join(self.removed)}." if self.removed else "No folder was deleted."]
        parts += [f"Kept {why}." for why in self.kept]
        return " ".join(parts)


def planned(record: index.RunRecord, others: list[index.RunRecord]) -> tuple[list[Path], list[str]]:
    """(folders that would be deleted, folders kept with why): what the confirmation asks about."""
    output = Path(record.output_dir)
    shared = any(other.id != record.id and other.output_dir == record.output_dir for other in others)
    remove: list[Path] = []
    kept: list[str] = []
    for folder in (output, saving.checkpoints_dir(output)):
        if not folder.exists():
            continue
        if folder.is_symlink():
            kept.append(f"{folder} (a symbolic link: neither it nor what it points to is deleted)")
        elif shared:
            kept.append(f"{folder} (another recorded run wrote it too)")
        elif not saving.is_ours(folder):
            kept.append(f"{folder} (not made by BERT Studio)")
        else:
            remove.append(folder)
    return remove, kept


def delete_run(record: index.RunRecord, others: list[index.RunRecord], folder: Path | None = None) -> Deleted:
    """Delete the run's own folders (see `planned`) and its record."""
    remove, kept = planned(record, others)
    removed = [str(path) for path in remove if saving.remove_ours(path)]
    index.forget(record.id, folder)
    return Deleted(tuple(removed), tuple(kept))
