"""The tab registry: every `*_tab.py` module here is a tab, ordered by its class's ORDER.

Adding a capability's tab is one new module; nothing else to edit (no shared list to merge).
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path


def tab_classes() -> list[type]:
    """TaskTab subclasses found in this package, by ORDER then title."""
    from bertstudio.ui.tabs.base import TaskTab

    found: list[type] = []
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if module.name.endswith("_tab"):
            namespace = importlib.import_module(f"{__name__}.{module.name}")
            found += [
                value for value in vars(namespace).values()
                if isinstance(value, type) and issubclass(value, TaskTab) and value is not TaskTab
                and value.__module__ == namespace.__name__
            ]
    return sorted(found, key=lambda cls: (cls.ORDER, cls.TITLE))
