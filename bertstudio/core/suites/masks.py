"""`{mask}` in a template: words a masked LM suggests for the slot (CheckList's `{mask}`).

A template's `{mask}` slot (every `{mask}` of a test takes the same word) is filled from a masked
LM's top-k predictions: the template's other slots are filled (every combination, or a seeded
sample of `MAX_CONTEXTS` of them), `{mask}` becomes the model's mask token, and the candidates are
summed over the contexts; the k with the highest total, ties by word. The words are shown (the
Tests tab lets a person untick some) and then fill `{mask}` like any slot list.

The core is pure given a predictor (texts with one mask each -> (word, score) candidates each);
`model_predictor` makes one from a loaded masked LM (the words of the spec's `mask_words`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bertstudio.core.errors import InputError
from bertstudio.core.suites.templates import TemplateError, expand, slots

if TYPE_CHECKING:
    from bertstudio.core.tasks.spec import TaskSpec

MASK = "mask"  # the slot name a masked LM fills
DEFAULT_TOP_K = 10
MAX_TOP_K = 50
MAX_CONTEXTS = 50  # filled templates asked per test: a bounded number of forward passes
Predictor = Callable[[Sequence[str]], Sequence[Sequence[tuple[str, float]]]]


def masked_templates(data: Any) -> dict[str, list[str]]:
    """Test name -> its templates, for every test of a suite's JSON value whose template uses `{mask}`
    and whose `fill` gives no list for it (read leniently: the suite reader reports what is malformed)."""
    found: dict[str, list[str]] = {}
    tests = data.get("tests") if isinstance(data, Mapping) else None
    for test in tests if isinstance(tests, list) else []:
        if not isinstance(test, Mapping) or not isinstance(test.get("name"), str):
            continue
        template = test.get("template")
        templates = [template] if isinstance(template, str) else template
        fill = test.get("fill", {})
        if not isinstance(templates, list) or not all(isinstance(t, str) for t in templates):
            continue
        try:
            used = {name for t in templates for name in slots(t)}
        except TemplateError:
            continue
        if MASK in used and not (isinstance(fill, Mapping) and MASK in fill):
            found[test["name"].strip()] = templates
    return found


def top_k_of(data: Any, given: int | None = None, given_as: str = "") -> int:
    """The suite's `mask_top_k` (or `given`, named `given_as` in a refusal: "--mask-top-k"), checked."""
    k = given if given is not None else (data.get("mask_top_k", DEFAULT_TOP_K) if isinstance(data, Mapping)
                                         else DEFAULT_TOP_K)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_TOP_K:
        what = given_as if given is not None and given_as else "The suite's field 'mask_top_k'"
        raise InputError(f"{what} is {k!r}, not a whole number from 1 to {MAX_TOP_K}.")
    return k


def contexts(templates: Sequence[str], fill: Mapping[str, Sequence[str]], mask_token: str,
             seed: int = 0) -> list[str]:
    """The first part's template with its other slots filled and `{mask}` as the mask token (at most
    MAX_CONTEXTS, a seeded sample); only the first `{mask}` is masked, later ones read the token too."""
    first = next(t for t in templates if MASK in slots(t))
    others = {name: list(fill[name]) for name in slots(first) if name != MASK and name in fill}
    filled = [row[0] for row in expand([first], {**others, MASK: ["\0"]})]
    texts = list(dict.fromkeys(text.replace("\0", mask_token, 1).replace("\0", mask_token) for text in filled))
    if len(texts) > MAX_CONTEXTS:
        texts = sorted(random.Random(f"{seed}:{MASK}").sample(texts, MAX_CONTEXTS))
    return texts


def suggest(templates: Sequence[str], fill: Mapping[str, Sequence[str]], predict: Predictor, mask_token: str,
            k: int = DEFAULT_TOP_K, seed: int = 0) -> list[str]:
    """The k words the masked LM likes best for `{mask}` over the template's contexts (summed scores)."""
    texts = contexts(templates, fill, mask_token, seed)
    totals: dict[str, float] = {}
    for candidates in predict(texts):
        for word, score in candidates:
            word = word.strip()
            if word and not word.startswith("##") and mask_token not in word:
                totals[word] = totals.get(word, 0.0) + float(score)
    return [word for word, _ in sorted(totals.items(), key=lambda item: (-item[1], item[0]))[:k]]


def suggest_all(data: Any, predict: Predictor, mask_token: str, k: int | None = None,
                seed: int = 0) -> dict[str, list[str]]:
    """Test name -> suggested words, for every test of the suite's JSON value that has a `{mask}` to fill."""
    k = top_k_of(data, k)
    out = {}
    tests = {t["name"].strip(): t for t in data["tests"] if isinstance(t, Mapping) and isinstance(t.get("name"), str)}
    for name, templates in masked_templates(data).items():
        fill = tests[name].get("fill", {})
        if not isinstance(fill, Mapping):
            continue
        try:
            out[name] = suggest(templates, fill, predict, mask_token, k, seed)
        except TemplateError as error:
            raise InputError(f"Test '{name}', field 'template': {error}.") from None
        if not out[name]:
            raise InputError(f"Test '{name}': the masked LM suggested no word for {{mask}}.",
                             hint="Choose a masked LM for the suite's language, or give 'fill' a 'mask' list.")
    return out


def _mask_spec() -> TaskSpec:
    """The task spec that reads a masked LM's words at a mask (Fill-mask's)."""
    from bertstudio.core.tasks.spec import all_specs

    return next(spec for spec in all_specs().values() if spec.mask_words is not None)


def model_predictor(loaded: Any, k: int, control: Any = None) -> tuple[Predictor, str]:
    """(predictor, mask token) of a loaded masked LM: the masked-LM task's top-k per text, candidates
    of the first mask, special tokens ([CLS], [SEP]...) left out: they are no words."""
    words = _mask_spec().mask_words
    assert words is not None
    mask_token = loaded.tokenizer.mask_token
    special = set(loaded.tokenizer.all_special_tokens)
    if not mask_token:
        raise InputError(f"'{loaded.info.request.source}' has no mask token, so it cannot fill {{mask}}.")

    def predictor(texts: Sequence[str]) -> list[list[tuple[str, float]]]:
        out = []
        for text in texts:
            if control is not None:
                control.check()
            out.append([(word, score) for word, score in words(loaded, text, k) if word.strip() not in special])
        return out

    return predictor, mask_token


def mask_request(source: str, like: Any = None) -> Any:
    """The LoadRequest of a masked LM (the task spec that reads its words), on `like`'s device and dtype."""
    from bertstudio.core.models import LoadRequest

    spec = _mask_spec()
    if like is None:
        return LoadRequest(source, spec.key)
    return LoadRequest(source, spec.key, like.device, like.dtype)


class Suggestions(dict[str, list[str]]):
    """Test name -> the words suggested for its `{mask}`; `warning` says when the masked LM's head was
    not trained (the words are then the guesses of random weights), as a task command warns."""

    warning: str = ""


def suggestions_job(source: str, data: Any, like: Any, control: Any, k: int | None = None,
                    seed: int = 0) -> Suggestions:
    """Load the masked LM `source` and suggest words for every `{mask}` of the suite's JSON value."""
    from bertstudio.core import engine
    from bertstudio.core.models import load_model

    k = top_k_of(data, k)
    control.report(f"Loading {source} for {{mask}}…")
    loaded = load_model(mask_request(source, like), control)
    predictor, token = model_predictor(loaded, k, control)
    control.report("Suggesting words for {mask}…")
    with engine.holding(loaded):
        try:
            found = Suggestions(suggest_all(data, predictor, token, k, seed))
        except InputError as error:  # e.g. no word at all: an untrained head is the likely why, said with it
            if not loaded.info.head_warning:
                raise
            raise InputError(f"{error.message} {loaded.info.head_warning}", hint=error.hint) from None
    found.warning = loaded.info.head_warning
    return found
