"""One place that bounds every count a user gives us (steps, rows, layers, sizes).

A count past its bound is refused before any work starts, with the bound in the message,
so no input can make the app compute for hours or allocate without end. Each bound is a
named constant here; the readers, the CLI and the tabs call `check_count` with it.
"""

from __future__ import annotations

from typing import Any

from bertstudio.core.errors import InputError

# Integrated gradients: quadrature nodes (numpy's leggauss is far worse than linear in n).
MAX_IG_STEPS = 1024
# Rows of one data file (evaluate, train, batch classification).
MAX_ROWS = 1_000_000
# Bytes of one data or text file we read whole into memory.
MAX_FILE_BYTES = 512 * 1024 * 1024
# One CSV field (csv's own default is 131,072 characters, too small for long documents).
MAX_FIELD_CHARS = 16 * 1024 * 1024
# A model's architecture, read from config.json before anything is allocated.
MAX_LAYERS = 256
MAX_HIDDEN = 65_536
MAX_PARAMETERS = 20_000_000_000
# JSON nesting accepted in a data or workspace file (Python's json recurses).
MAX_JSON_DEPTH = 64
# A text read whole as one input (a QA context file): a long book is a few MiB.
MAX_CONTEXT_BYTES = 16 * 1024 * 1024
# Rows per forward pass of an evaluation (padded to the longest: memory grows with it).
MAX_BATCH_SIZE = 4096
# LIME / Kernel SHAP samples (one forward row each): below 8 the fit has fewer rows than a sentence has words.
MIN_PERTURBATION_SAMPLES = 8
MAX_PERTURBATION_SAMPLES = 4096
# Evaluate rows explained together (one attribution pass each: about 0.1 s per row on a small model).
MAX_EXPLAIN_ROWS = 500
# Nearest rows listed for one evaluated row.
MAX_NEIGHBOURS = 1000


def as_int(value: Any, what: str) -> int:
    """`value` as an int; an InputError naming `what` for anything that is not a whole number.

    Accepts ints and ASCII-digit strings ("12", "-3"); refuses bools, floats, "²" (a digit to
    str.isdigit but not to int), "1e3" and the like."""
    if isinstance(value, bool):
        raise InputError(f"{what} must be a whole number (got {value!r}).")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        body = text[1:] if text[:1] in "+-" else text
        if body and body.isascii() and body.isdigit() and len(body) <= 30:
            return int(text)
    raise InputError(f"{what} must be a whole number (got {str(value)[:40]!r}).")


def check_count(value: Any, what: str, low: int, high: int) -> int:
    """`value` as an int within [low, high]; otherwise an InputError that states the bound."""
    number = as_int(value, what)
    if not low <= number <= high:
        raise InputError(f"{what} must be between {low:,} and {high:,} (got {number:,}).",
                         hint=f"Use at most {high:,}." if number > high else "")
    return number
