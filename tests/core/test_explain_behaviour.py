"""Real behaviour on trained MiniLM heads: the attributions point at the words that decide."""

from __future__ import annotations

import pytest

from bertstudio.core.models import LoadRequest, load_uncached
from tests.fixtures.trained_nsp_ner import NER_HELD_OUT, trained_ner
from tests.fixtures.trained_sentiment import HELD_OUT, trained_sentiment

pytestmark = pytest.mark.slow  # trained fixtures on the real MiniLM encoder


@pytest.fixture(scope="module")
def sentiment(real_models):  # noqa: ANN001, ANN201
    return load_uncached(LoadRequest(str(trained_sentiment(real_models["all-minilm-l6-v2"])), "classification"))


@pytest.fixture(scope="module")
def ner(real_models):  # noqa: ANN001, ANN201
    return load_uncached(LoadRequest(str(trained_ner(real_models["all-minilm-l6-v2"])), "ner"))


@pytest.mark.parametrize(("sentence", "label", "words"), HELD_OUT)
def test_sentiment_words_get_the_largest_attribution(sentiment, sentence: str, label: str, words: set) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    result = explain(sentiment, "classification", (sentence,), "integrated-gradients")
    assert result.target == label and result.score > 0.8
    ranked = sorted((value, token) for token, value, special in
                    zip(result.tokens, result.attributions, result.special, strict=True) if not special)
    assert ranked[-1][1] in words, ranked
    others = max(value for value, token in ranked if token not in words)
    assert ranked[-1][0] > 0 and ranked[-1][0] > 1.5 * others, ranked


def test_converging_narrows_the_completeness_gap(sentiment) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    sentence = HELD_OUT[1][0]
    plain = explain(sentiment, "classification", (sentence,), steps=10)
    converged = explain(sentiment, "classification", (sentence,), steps=10, converge=True)
    gap = abs(converged.score - converged.baseline_score)
    assert converged.steps > plain.steps and abs(converged.delta) < abs(plain.delta)
    assert abs(converged.delta) <= 0.01 * gap or any("did not converge" in n.text for n in converged.notes)


@pytest.mark.parametrize(("sentence", "entities"), NER_HELD_OUT)
def test_an_entity_s_own_tokens_dominate_its_attribution(ner, sentence: str, entities: dict) -> None:  # noqa: ANN001
    from bertstudio.core.explain.attribution import explain

    default = explain(ner, "ner", (sentence,), "integrated-gradients")
    position = int(default.target.split(":")[0])
    own = abs(default.attributions[position])
    assert default.tokens[position] in sentence.lower().split()[0:4] + [w.lower() for w in entities]
    assert own > sum(abs(v) for i, v in enumerate(default.attributions) if i != position)
    for value, _label in default.targets:  # every entity the model found
        result = explain(ner, "ner", (sentence,), "integrated-gradients", target=value, steps=16)
        index = int(value.split(":")[0])
        largest = max(range(len(result.attributions)), key=lambda i: abs(result.attributions[i]))
        assert largest == index, (value, list(zip(result.tokens, result.attributions, strict=True)))


def test_faithfulness_tells_a_faithful_method_from_an_unfaithful_one(sentiment) -> None:  # noqa: ANN001
    """'bad' carries this sentence: deleting what occlusion or IG ranks first drops P(negative) to near 0
    (high comprehensiveness) and keeping it alone keeps it (low sufficiency). Gradient x input ranks
    other tokens first on it (its sign follows the embedding's, not the effect), and the numbers say so."""
    from bertstudio.core.explain.attribution import explain

    sentence = HELD_OUT[1][0]  # "Overall, the tablet is truly bad."
    for method in ("occlusion", "integrated-gradients"):
        faithful = explain(sentiment, "classification", (sentence,), method, steps=16, faithfulness=True).faithfulness
        assert faithful.aopc_comprehensiveness > 0.8 and faithful.aopc_sufficiency < 0.05, (method, faithful)
    unfaithful = explain(sentiment, "classification", (sentence,), "grad-x-input", faithfulness=True).faithfulness
    assert unfaithful.aopc_comprehensiveness < 0.5 and unfaithful.aopc_sufficiency > 0.1, unfaithful
