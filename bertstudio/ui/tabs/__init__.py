"""The tab registry: every `*_tab.py` module here is a tab, ordered by its class's ORDER.

Adding a capability's tab is one new module; nothing else to edit (no shared list to merge).
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bertstudio.ui.tabs.frame import StudioTab

# Built before the window shows; the other tabs (and pyqtgraph) are imported right after.
FIRST_TAB_MODULE = "fill_mask_tab"


def tab_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name.endswith("_tab"))


def tab_classes(modules: list[str] | None = None) -> list[type[StudioTab]]:
    """The tabs (StudioTab subclasses) of `modules` (default: every *_tab module here), by ORDER then title."""
    from bertstudio.ui.tabs.frame import StudioTab

    found: list[type[StudioTab]] = []
    for name in tab_modules() if modules is None else modules:
        if name:
            namespace = importlib.import_module(f"{__name__}.{name}")
            found += [
                value for value in vars(namespace).values()
                if isinstance(value, type) and issubclass(value, StudioTab)
                and value.__module__ == namespace.__name__
            ]
    return sorted(found, key=lambda cls: (cls.ORDER, cls.TITLE))
