"""Issue 40, the output policy in the window's picture exports (core/outputs.py): an added suffix never
replaces a file the save dialog did not ask about; never into BERT Studio's own folder. Writes are
atomic (a temporary file beside, renamed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.resources import resource_path


def test_a_picture_export_without_a_suffix_never_replaces_a_file_unasked(tmp_path: Path) -> None:
    """The save dialog confirms the name typed ("plot"); ".png" added made another name, replaced silently."""
    from bertstudio.ui.export import target

    (tmp_path / "plot.png").write_bytes(b"an earlier picture")
    with pytest.raises(InputError, match="already exists"):
        target(tmp_path / "plot")
    assert target(tmp_path / "plot.png") == tmp_path / "plot.png"  # the dialog asked about this one
    with pytest.raises(InputError, match="BERT Studio's own folder"):
        target(resource_path("datasets", "picture.png"))
