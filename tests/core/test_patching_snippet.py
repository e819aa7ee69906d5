"""Copy as Python for a trace cell: the hooks-only script prints the very number of the cell."""

from __future__ import annotations

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadRequest, load_uncached
from tests.conftest import run_scripts
from tests.core.test_patching import _swapped


def _numbers(stdout: str) -> dict[str, float]:
    words = stdout.split()
    return {words[i]: float(words[i + 1]) for i in range(0, len(words), 2)}


SNIPPET_ARCHS = ("albert", "distilbert")


@pytest.fixture(scope="module")
def traced(checkpoint_factory, tmp_path_factory) -> dict[str, tuple]:  # noqa: ANN001
    """Per architecture: a fill-mask trace, the cells checked (last layer's state at the mask, head 1.1),
    and what each cell's script printed; the four scripts run in one fresh interpreter (run_scripts)."""
    from bertstudio.core.patching.snippet import patch_script
    from bertstudio.core.patching.trace import trace

    found, scripts = {}, {}
    for arch in SNIPPET_ARCHS:
        folder = str(checkpoint_factory(arch, "MaskedLM"))
        loaded = load_uncached(LoadRequest(folder, "fill-mask"))
        mask = loaded.tokenizer.mask_token
        clean = (f"the cat sat on the {mask} .",)
        corrupted = (_swapped(loaded.tokenizer, "the {} sat on the " + mask + " .", "cat"),)
        result = trace(loaded, "fill-mask", clean, corrupted)
        assert result.states is not None
        last, position = len(result.states) - 1, result.clean_tokens.index(mask)
        scripts[f"{arch}-state"] = patch_script(folder, result, clean, corrupted, "state", last, position)
        scripts[f"{arch}-head"] = patch_script(folder, result, clean, corrupted, "head", 1, 1)
        found[arch] = (result, last, position)
    printed = run_scripts(scripts, tmp_path_factory.mktemp("patch-scripts"), timeout=120)
    return {arch: (*found[arch], _numbers(printed[f"{arch}-state"]), _numbers(printed[f"{arch}-head"]))
            for arch in SNIPPET_ARCHS}


@pytest.mark.parametrize("arch", SNIPPET_ARCHS)
def test_the_script_reproduces_a_state_and_a_head_cell(traced, arch: str) -> None:  # noqa: ANN001
    result, last, position, state, head = traced[arch]
    assert state["clean"] == pytest.approx(result.clean_score, abs=1e-5)
    assert state["corrupted"] == pytest.approx(result.corrupted_score, abs=1e-5)
    assert state["patched"] == pytest.approx(result.states[last][position], abs=1e-5)
    assert head["patched"] == pytest.approx(result.heads[1][1], abs=1e-5)


def test_tasks_without_a_script_say_so(checkpoint_factory) -> None:  # noqa: ANN001
    from bertstudio.core.patching.snippet import patch_script
    from bertstudio.core.patching.trace import trace

    loaded = load_uncached(LoadRequest(str(checkpoint_factory("bert", "QuestionAnswering")), "qa"))
    texts = ("where does john live ?", "john lives in paris .")
    result = trace(loaded, "qa", texts, ("where does john live ?", "john lives in rome ."))
    with pytest.raises(InputError, match="Fill-mask, Next sentence, NER, Classification"):
        patch_script("m", result, texts, texts, "head", 0, 0)


def test_the_script_computes_the_chosen_target_not_the_argmax(real_models, checkpoint_factory,  # noqa: ANN001
                                                              tmp_path) -> None:  # noqa: ANN001
    """Issue 40: on the topic model with target "finance" the app showed 0.0012 and the script printed
    0.872 (the argmax's probability). Now the script reads the chosen label, and a fill-mask script the
    chosen word, and each prints the app's numbers."""
    from bertstudio.core.patching.snippet import patch_script
    from bertstudio.core.patching.trace import trace

    topics = str(real_models["categorium-bert-tiny-topics-en"])
    loaded = load_uncached(LoadRequest(topics, "classification"))
    clean, corrupted = ("the stock market fell sharply today",), ("the football match ended sharply today",)
    result = trace(loaded, "classification", clean, corrupted, "finance")
    assert result.target == "finance"
    folder = str(checkpoint_factory("bert", "MaskedLM"))
    masked = load_uncached(LoadRequest(folder, "fill-mask"))
    mask = masked.tokenizer.mask_token
    word_clean, word_corrupted = (f"the cat sat on the {mask} .",), (f"the dog sat on the {mask} .",)
    word = trace(masked, "fill-mask", word_clean, word_corrupted, "house")
    printed = run_scripts({
        "topic": patch_script(topics, result, clean, corrupted, "head", 0, 1),
        "word": patch_script(folder, word, word_clean, word_corrupted, "head", 1, 0)}, tmp_path, timeout=120)
    for found, script in ((result, "topic"), (word, "word")):
        numbers = _numbers(printed[script])
        assert numbers["clean"] == pytest.approx(found.clean_score, abs=1e-5)
        assert numbers["corrupted"] == pytest.approx(found.corrupted_score, abs=1e-5)
        assert numbers["patched"] == pytest.approx(found.heads[int(script == "word")][int(script == "topic")],
                                                   abs=1e-5)
