"""Copy as Python for a trace cell: the hooks-only script prints the very number of the cell."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadRequest, load_uncached
from tests.core.test_patching import _swapped


def _printed(script: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    words = done.stdout.split()
    return {words[i]: float(words[i + 1]) for i in range(0, len(words), 2)}


@pytest.mark.parametrize("arch", ("albert", "distilbert"))
def test_the_script_reproduces_a_state_and_a_head_cell(checkpoint_factory, arch: str) -> None:  # noqa: ANN001
    from bertstudio.core.patching.snippet import patch_script
    from bertstudio.core.patching.trace import trace

    folder = str(checkpoint_factory(arch, "MaskedLM"))
    loaded = load_uncached(LoadRequest(folder, "fill-mask"))
    mask = loaded.tokenizer.mask_token
    clean = (f"the cat sat on the {mask} .",)
    corrupted = (_swapped(loaded.tokenizer, "the {} sat on the " + mask + " .", "cat"),)
    result = trace(loaded, "fill-mask", clean, corrupted)
    assert result.states is not None
    last = len(result.states) - 1
    position = result.clean_tokens.index(mask)
    state = _printed(patch_script(folder, result, clean, corrupted, "state", last, position))
    assert state["clean"] == pytest.approx(result.clean_score, abs=1e-5)
    assert state["corrupted"] == pytest.approx(result.corrupted_score, abs=1e-5)
    assert state["patched"] == pytest.approx(result.states[last][position], abs=1e-5)
    head = _printed(patch_script(folder, result, clean, corrupted, "head", 1, 1))
    assert head["patched"] == pytest.approx(result.heads[1][1], abs=1e-5)


def test_tasks_without_a_script_say_so(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.patching.snippet import patch_script
    from bertstudio.core.patching.trace import trace

    loaded = load_uncached(LoadRequest(str(checkpoint_factory("bert", "QuestionAnswering")), "qa"))
    texts = ("where does john live ?", "john lives in paris .")
    result = trace(loaded, "qa", texts, ("where does john live ?", "john lives in rome ."))
    with pytest.raises(InputError, match="Fill-mask, Next sentence, NER, Classification"):
        patch_script("m", result, texts, texts, "head", 0, 0)
