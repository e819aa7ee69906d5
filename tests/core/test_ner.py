"""NER equals transformers' TokenClassificationPipeline for every strategy; bad input is explained."""

from __future__ import annotations

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.ner import DEFAULT_STRATEGY, STRATEGIES, NerInput, label_hint, tag
from bertstudio.core.tasks.ner.entities import entity_type

TEXT = "my name is klaus and i live in vienna , anna works in rome ."


def _reference(folder, text: str, strategy: str):
    from transformers import AutoModelForTokenClassification, AutoTokenizer, pipeline

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForTokenClassification.from_pretrained(folder).eval()
    return pipeline("token-classification", model=model, tokenizer=tokenizer)(text, aggregation_strategy=strategy)


def _same(ours, theirs, grouped: bool) -> None:
    key = "entity_group" if grouped else "entity"
    assert [e.label for e in ours] == [t[key] for t in theirs]
    assert [e.word for e in ours] == [t["word"] for t in theirs]
    assert [(e.start, e.end) for e in ours] == [(t["start"], t["end"]) for t in theirs]
    assert [e.score for e in ours] == pytest.approx([float(t["score"]) for t in theirs], abs=1e-6)


@pytest.mark.filterwarnings("ignore:Tokenizer does not support real words")
@pytest.mark.parametrize("arch", ["bert", "roberta", "electra", "distilbert"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_equals_pipeline(checkpoint_factory, arch: str, strategy: str) -> None:
    folder = checkpoint_factory(arch, "TokenClassification")
    loaded = load_model(LoadRequest(str(folder), "ner"))
    result = tag(loaded, TEXT, strategy)
    expected = _reference(folder, TEXT, strategy)
    assert expected, "the random head should tag something, or this test proves nothing"
    _same(result.entities, expected, grouped=strategy != "none")
    for ours, theirs in zip(result.to_json(), expected, strict=True):
        assert set(ours) == set(theirs)  # the CLI's JSON has the pipeline's keys
        assert ours == pytest.approx({**theirs, "score": float(theirs["score"])})
    # every strategy of the comparison equals the pipeline too, from the same forward pass
    for other in STRATEGIES:
        _same(result.comparison[other], _reference(folder, TEXT, other), grouped=other != "none")
    assert not [n for n in result.notes if n.level == "warning"]  # trained head, short text: nothing to warn


def test_wordpieces_cover_every_token_with_offsets(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "TokenClassification")), "ner"))
    text = "klaus lives in vienna"
    result = tag(loaded, text, "simple")
    ids = loaded.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert [p.word for p in result.wordpieces] == loaded.tokenizer.convert_ids_to_tokens(ids)
    assert {p.label for p in result.wordpieces} <= set(result.labels)
    for piece in result.wordpieces:
        assert piece.word.removeprefix("##") == text[piece.start:piece.end]
        assert 0 < piece.score <= 1
    assert result.entity_types == ("PER", "LOC")


def test_word_strategies_refused_on_slow_tokenizer(checkpoint_factory) -> None:
    from dataclasses import replace

    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    folder = checkpoint_factory("bert", "TokenClassification")
    loaded = load_model(LoadRequest(str(folder), "ner"))
    slow = BertTokenizerLegacy(vocab_file=str(folder / "vocab.txt")) if (folder / "vocab.txt").exists() else None
    if slow is None:
        import json
        import tempfile

        vocab = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]
        path = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
        path.write("\n".join(sorted(vocab, key=vocab.get)))
        path.close()
        slow = BertTokenizerLegacy(vocab_file=path.name)
    assert not slow.is_fast
    slow_loaded = replace(loaded, tokenizer=slow, extras={})
    for strategy in ("first", "average", "max"):
        with pytest.raises(InputError, match="fast tokenizer"):
            tag(slow_loaded, TEXT, strategy)
    result = tag(slow_loaded, TEXT, "simple")
    assert set(result.unavailable) == {"first", "average", "max"}
    assert set(result.comparison) == {"none", "simple"}


def test_roberta_word_boundaries_are_noted(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("roberta", "TokenClassification")), "ner"))
    assert "guess word boundaries" in tag(loaded, TEXT, "first").notes[0].text


@pytest.mark.parametrize("text", ["", "  \n "])
def test_empty_text(checkpoint_factory, text: str) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "TokenClassification")), "ner"))
    with pytest.raises(InputError, match="empty"):
        tag(loaded, text)


def test_unknown_strategy(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "TokenClassification")), "ner"))
    with pytest.raises(InputError, match="simple"):
        tag(loaded, TEXT, "mean")


def test_long_text_truncated_with_warning(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "TokenClassification")), "ner"))
    result = tag(loaded, "klaus lives in vienna . " * 100, "simple")
    assert result.truncation is not None and result.truncation.limit == 64
    assert [n.text for n in result.notes if n.level == "warning"] == [result.truncation.message]
    assert all(e.end is not None and e.end <= len(result.text) for e in result.entities)


def test_untrained_head_and_generic_labels_are_flagged(checkpoint_factory, real_models) -> None:
    from bertstudio.core.jobs import run_spec
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.ner import NerInput
    from bertstudio.core.tasks.ner.spec import SPEC

    request = LoadRequest(str(real_models["all-minilm-l6-v2"]), "ner")
    outcome = run_spec(SPEC, request, NerInput("my name is klaus"), TaskControl())
    head, hint = outcome.notes[0], outcome.notes[1]
    assert head.level == "warning" and "no trained ner head" in head.text  # run_spec adds it, once
    assert hint.level == "info" and "LABEL_0" in hint.text and "model card" in hint.text
    assert not any("no trained ner head" in n.text for n in outcome.result.notes)
    # a token-classification checkpoint trained as something else is flagged too
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "ner"))
    assert loaded.info.head_warning


def _inside_a_word(text: str, entities) -> list[str]:  # noqa: ANN001
    """Entities that start or end inside a word ('##iv' of "live"): what a person does not call an entity."""
    return [e.word for e in entities
            if (e.start > 0 and text[e.start - 1].isalnum()) or (e.end < len(text) and text[e.end].isalnum())]


def test_default_strategy_tags_whole_words(checkpoint_factory, capsys) -> None:
    """The issue: the default 'simple' listed wordpieces as entities ('Mer' + 'kel'). The random head
    tags "live" (l ##i ##v ##e) with pieces of different types: 'simple' splits it, the default does not."""
    import json

    from bertstudio.cli import main
    from bertstudio.cli.ner import DEFAULT_STRATEGY as CLI_DEFAULT

    assert DEFAULT_STRATEGY == CLI_DEFAULT == NerInput("x").aggregation == "first"
    folder = checkpoint_factory("bert", "TokenClassification")
    loaded = load_model(LoadRequest(str(folder), "ner"))
    result = tag(loaded, TEXT)
    assert result.aggregation == "first" and result.entities and not _inside_a_word(TEXT, result.entities)
    assert _inside_a_word(TEXT, result.comparison["simple"])  # the old default: pieces of "live"
    assert main(["ner", "--model", str(folder), TEXT, "--json"]) == 0  # the CLI's default too
    rows = json.loads(capsys.readouterr().out)
    assert [(r["start"], r["end"]) for r in rows] == [(e.start, e.end) for e in result.entities]


def test_helpers() -> None:
    assert entity_type("B-PER") == "PER" and entity_type("I-LOC") == "LOC" and entity_type("LABEL_3") == "LABEL_3"
    assert entity_type("O") == "O" and entity_type("MISC") == "MISC"
    assert label_hint({0: "O", 1: "B-PER"}) == ""


def test_cli_json(checkpoint_factory, capsys) -> None:
    import json

    from bertstudio.cli import main

    folder = checkpoint_factory("bert", "TokenClassification")
    assert main(["ner", "--model", str(folder), TEXT, "--aggregation", "first", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    expected = _reference(folder, TEXT, "first")
    assert [(r["entity_group"], r["word"], r["start"], r["end"]) for r in rows] == [
        (t["entity_group"], t["word"], t["start"], t["end"]) for t in expected
    ]
    assert main(["ner", "--model", str(folder), "", "--json"]) == 1
    assert "empty" in capsys.readouterr().err


@pytest.mark.slow
def test_trained_minilm_tags_held_out_names_and_places(real_models) -> None:
    from tests.fixtures.trained_nsp_ner import NER_HELD_OUT, NER_PEOPLE, NER_PLACES, trained_ner

    loaded = load_model(LoadRequest(str(trained_ner(real_models["all-minilm-l6-v2"])), "ner"))
    assert loaded.info.head_report.complete and not loaded.info.head_warning
    for text, expected in NER_HELD_OUT:
        assert not any(name in NER_PEOPLE + NER_PLACES for name in expected)  # truly held out
        for strategy in ("simple", "first", "average", "max"):
            result = tag(loaded, text, strategy)
            found = {(e.start, e.end): e.entity_type for e in result.entities}
            for name, kind in expected.items():
                offset = text.index(name)
                for word in name.split():  # every word of the name, as that type, at its place
                    start = text.index(word, offset)
                    assert found.get((start, start + len(word))) == kind or found.get(
                        (offset, offset + len(name))) == kind, (strategy, text, result.entities)
            assert {e.entity_type for e in result.entities} == set(expected.values())
            assert all(e.score > 0.5 for e in result.entities)


def test_cli_compare_json(checkpoint_factory, tmp_path, capsys) -> None:
    """--compare adds model B's entities (equal to the pipeline's) and same/relabelled/removed/added."""
    import json

    from bertstudio.cli import main
    from bertstudio.core.tasks.ner.entities import compare_entities
    from tests.fixtures.checkpoints import build_checkpoint

    first = checkpoint_factory("bert", "TokenClassification")
    second = build_checkpoint(tmp_path / "bert-tc-seed1", "bert", "TokenClassification", seed=1)
    assert main(["ner", "--model", str(first), TEXT, "--compare", str(second), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == str(first) and out["compare"]["model"] == str(second)
    for rows, folder in ((out["result"], first), (out["compare"]["result"], second)):
        assert [(r["entity_group"], r["start"], r["end"]) for r in rows] == [
            (t["entity_group"], t["start"], t["end"]) for t in _reference(folder, TEXT, DEFAULT_STRATEGY)]
    diff = out["compare"]["differences"]
    spans_a = {(r["start"], r["end"]): r["entity_group"] for r in out["result"]}
    spans_b = {(r["start"], r["end"]): r["entity_group"] for r in out["compare"]["result"]}
    assert [(e["start"], e["end"]) for e in diff["removed"]] == sorted(set(spans_a) - set(spans_b))
    assert [(e["start"], e["end"]) for e in diff["added"]] == sorted(set(spans_b) - set(spans_a))
    assert {(d["a"]["start"], d["a"]["end"]) for d in diff["relabelled"]} == {
        s for s in set(spans_a) & set(spans_b) if spans_a[s] != spans_b[s]}
    assert diff["same"] == sum(1 for s in set(spans_a) & set(spans_b) if spans_a[s] == spans_b[s])
    assert diff["changed"] and diff == compare_entities(out["result"], out["compare"]["result"]).to_json()
    # the same model twice: nothing changed; text output lists the changes
    assert main(["ner", "--model", str(first), TEXT, "--compare", str(first), "--json"]) == 0
    same = json.loads(capsys.readouterr().out)["compare"]["differences"]
    assert not same["changed"] and same["same"] == len(spans_a)
    assert main(["ner", "--model", str(first), TEXT, "--compare", str(second)]) == 0
    text = capsys.readouterr().out
    assert "differences (A -> B)" in text and ("added" in text or "removed" in text or "relabelled" in text)
