"""transformers imported once, on one thread, with every lazy name we use resolved.

transformers is a lazy module: `from transformers import CONFIG_MAPPING` imports a submodule
on first use. Two threads doing that at once (the start-up import in one worker, a models
folder scan in another) can see a half-initialised module and fail with "ImportError: cannot
import name 'CONFIG_MAPPING' from 'transformers'". So the first caller imports and resolves
everything under a lock; every other caller waits for it and then finds plain attributes.
"""

from __future__ import annotations

import threading
from types import ModuleType

_lock = threading.Lock()
_done = False
# What our workers import by name (besides each task's Auto class, taken from the specs).
NAMES = ("CONFIG_MAPPING", "AutoConfig", "AutoTokenizer", "PreTrainedModel", "PreTrainedTokenizerBase", "pipeline")


def import_transformers() -> ModuleType:
    """transformers with NAMES and every spec's model class resolved; at most one thread imports."""
    global _done
    with _lock:
        import transformers

        if not _done:
            from bertstudio.core.tasks.spec import all_specs

            for name in (*NAMES, *(spec.model_class for spec in all_specs().values())):
                getattr(transformers, name)
            _done = True
    return transformers
