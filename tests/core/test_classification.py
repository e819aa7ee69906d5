"""Classification equals TextClassificationPipeline (single, pair, batch); tables in and out; errors."""

from __future__ import annotations

import csv

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.classification import (
    classify,
    classify_batch,
    compare,
    export_csv,
    lines_to_texts,
    read_texts,
    score_kind,
    table_columns,
)

ARCHS = ["bert", "distilbert", "roberta"]


def _reference(folder):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    return pipeline("text-classification", model=model, tokenizer=tokenizer)


def _same(ours, theirs) -> None:
    assert [s.label for s in ours.scores] == [t["label"] for t in theirs]
    assert [s.score for s in ours.scores] == pytest.approx([t["score"] for t in theirs], abs=1e-6)


@pytest.mark.parametrize("arch", ARCHS)
def test_single_pair_batch_equal_pipeline(checkpoint_factory, arch: str) -> None:
    folder = checkpoint_factory(arch, "SequenceClassification")
    loaded = load_model(LoadRequest(str(folder), "classification"))
    reference = _reference(folder)
    text, pair = "the cat sat on the mat", "a dog ran fast in the house"

    single = classify(loaded, text)
    assert single.kind == "single-label" and not single.batch
    _same(single.first, reference(text, top_k=None))
    assert sum(s.score for s in single.first.scores) == pytest.approx(1.0, abs=1e-5)
    assert {s.label for s in single.first.scores} == {"negative", "positive"}

    paired = classify(loaded, text, pair)
    _same(paired.first, reference({"text": text, "text_pair": pair}, top_k=None))
    assert paired.first.text_pair == pair

    rows = ["the cat sat", "a big old house with a tree and a river", "paris is the capital of france", "music"]
    batch = classify_batch(loaded, rows, batch_size=3)
    expected = reference(rows, top_k=None, batch_size=3)
    assert batch.batch and len(batch.rows) == 4
    for ours, theirs in zip(batch.rows, expected, strict=True):
        _same(ours, theirs)
    assert isinstance(batch.to_json()[0], list) and batch.to_json()[0][0]["label"] in {"negative", "positive"}


def test_real_topic_classifier_recipe_is_food(real_models) -> None:
    loaded = load_model(LoadRequest(str(real_models["categorium-bert-tiny-topics-en"]), "classification"))
    result = classify(loaded, "This pasta recipe with tomato sauce, garlic and basil is ready in twenty minutes.")
    assert result.first.top.label == "food" and result.first.top.score > 0.8
    assert len(result.first.scores) == 27
    scores = [s.score for s in result.first.scores]
    assert scores == sorted(scores, reverse=True)
    assert not result.notes and loaded.info.head_report.complete


def test_score_kinds_follow_problem_type() -> None:
    class Config:
        def __init__(self, num_labels: int, problem_type: str | None) -> None:
            self.num_labels, self.problem_type = num_labels, problem_type

    assert score_kind(Config(3, None)) == "single-label"
    assert score_kind(Config(3, "multi_label_classification")) == "multi-label"
    assert score_kind(Config(1, None)) == "multi-label"
    assert score_kind(Config(1, "regression")) == "regression"


@pytest.mark.parametrize("problem_type,num_labels", [("multi_label_classification", 3), ("regression", 1)])
def test_multi_label_and_regression_equal_pipeline(tmp_path, checkpoint_factory, problem_type, num_labels) -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    base = checkpoint_factory("bert", "SequenceClassification")
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=num_labels, problem_type=problem_type, ignore_mismatched_sizes=True,
        id2label={i: f"L{i}" for i in range(num_labels)}, label2id={f"L{i}": i for i in range(num_labels)},
    )
    folder = tmp_path / problem_type
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(base).save_pretrained(folder)
    loaded = load_model(LoadRequest(str(folder), "classification"))
    result = classify(loaded, "the cat sat on the mat")
    expected = "multi-label" if num_labels > 1 else "regression"
    assert result.kind == expected
    _same(result.first, _reference(folder)("the cat sat on the mat", top_k=None))
    if expected == "multi-label":
        assert all(0 < s.score < 1 for s in result.first.scores)
        assert sum(s.score for s in result.first.scores) != pytest.approx(1.0, abs=1e-3)


def test_long_inputs_are_cut_and_said(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    long = "the dog ran fast . " * 100
    single = classify(loaded, long)
    assert single.truncation is not None and single.first.truncated and "cut" in single.notes[0].text
    pair = classify(loaded, long, "the cat")
    assert pair.first.truncated
    batch = classify_batch(loaded, ["the cat", long])
    assert [r.truncated for r in batch.rows] == [False, True]
    assert "rows 2" in batch.notes[0].text and batch.notes[0].level == "warning"


@pytest.mark.parametrize("text", ["", "  \n"])
def test_empty_text(checkpoint_factory, text: str) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    with pytest.raises(InputError, match="empty"):
        classify(loaded, text)


def test_batch_errors(checkpoint_factory) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    with pytest.raises(InputError, match="no rows"):
        classify_batch(loaded, [])
    with pytest.raises(InputError, match="Row 2 is empty"):
        classify_batch(loaded, ["the cat", " "])


def test_csv_tsv_columns_and_export(tmp_path, checkpoint_factory) -> None:
    table = tmp_path / "reviews.csv"
    table.write_text('id,review\n1,"the cat sat, on the mat"\n2,a good film\n', encoding="utf-8")
    tsv = tmp_path / "reviews.tsv"
    tsv.write_text("text\tother\nthe dog\tx\na book\ty\n", encoding="utf-8")
    assert table_columns(table) == ["id", "review"]
    assert read_texts(table, "review") == ["the cat sat, on the mat", "a good film"]
    assert read_texts(tsv) == ["the dog", "a book"]  # 'text' column by default
    with pytest.raises(InputError, match="no column 'text'") as caught:
        read_texts(table, "text")
    assert "'id', 'review'" in caught.value.hint
    with pytest.raises(InputError, match="does not exist"):
        read_texts(tmp_path / "nothing.csv")
    assert lines_to_texts("a\n\n  b \n") == ["a", "b"]

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    result = classify_batch(loaded, read_texts(table, "review"))
    out = tmp_path / "out.csv"
    export_csv(result, out)
    with out.open(encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))
    assert [r["text"] for r in records] == ["the cat sat, on the mat", "a good film"]
    assert records[0]["label"] == result.rows[0].top.label
    assert float(records[0]["score"]) == pytest.approx(result.rows[0].top.score)
    assert set(records[0]) == {"text", "label", "score", "score:negative", "score:positive"}


def test_compare_two_models(checkpoint_factory) -> None:
    a = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    b = load_model(LoadRequest(str(checkpoint_factory("roberta", "SequenceClassification")), "classification"))
    diffs = compare(classify(a, "the cat"), classify(b, "the cat"))
    assert len(diffs) == 1
    ra, rb = classify(a, "the cat").first, classify(b, "the cat").first
    delta = diffs[0].delta_of("positive")
    by_a = {s.label: s.score for s in ra.scores}
    by_b = {s.label: s.score for s in rb.scores}
    assert delta.delta == pytest.approx(by_b["positive"] - by_a["positive"])
    assert diffs[0].top_changed == (ra.top.label != rb.top.label)
    with pytest.raises(InputError, match="rows"):
        compare(classify_batch(a, ["x", "y"]), classify(b, "x"))


def test_cli_single_pair_file_and_compare(capsys, tmp_path, checkpoint_factory, real_models) -> None:
    import json

    from bertstudio.cli import main

    topics = str(real_models["categorium-bert-tiny-topics-en"])
    assert main(["classify", "--model", topics, "This pasta recipe with tomato sauce is ready in twenty minutes.",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out[0]["label"] == "food" and len(out) == 27
    assert [r["score"] for r in out] == sorted((r["score"] for r in out), reverse=True)

    tiny = str(checkpoint_factory("bert", "SequenceClassification"))
    assert main(["classify", "--model", tiny, "the cat", "--pair", "the dog", "--json"]) == 0
    assert {r["label"] for r in json.loads(capsys.readouterr().out)} == {"negative", "positive"}

    table = tmp_path / "rows.tsv"
    table.write_text("id\tsentence\n1\tthe cat\n2\ta dog ran\n", encoding="utf-8")
    assert main(["classify", "--model", tiny, "--file", str(table), "--column", "sentence", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 2 and all(len(r) == 2 for r in rows)
    assert main(["classify", "--model", tiny, "--file", str(table), "--column", "text"]) == 1
    err = capsys.readouterr().err
    assert "no column 'text'" in err and "'id', 'sentence'" in err

    other = str(checkpoint_factory("roberta", "SequenceClassification"))
    assert main(["classify", "--model", tiny, "the cat", "--compare", other, "--json"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert both["compare"]["model"] == other and len(both["compare"]["result"]) == 2
    assert both["compare"]["differences"]["top_changed"] == (both["result"][0]["label"] !=
                                                             both["compare"]["result"][0]["label"])
    assert main(["classify", "--model", tiny, "", "--json"]) == 1
    assert "empty" in capsys.readouterr().err

    # a batch compared: one difference per row, in input order
    assert main(["classify", "--model", tiny, "--file", str(table), "--column", "sentence", "--compare", other,
                 "--json"]) == 0
    both = json.loads(capsys.readouterr().out)
    assert len(both["compare"]["differences"]) == 2 and len(both["compare"]["result"]) == 2
    assert [d["top_a"] for d in both["compare"]["differences"]] == [row[0]["label"] for row in both["result"]]


@pytest.mark.parametrize("name", ["rows.csv", "rows.txt", "rows.bin"])
def test_cli_binary_file_is_one_message(capsys, tmp_path, checkpoint_factory, name: str) -> None:
    """A binary file as --file: exit 1 and one message naming the file, never a traceback."""
    from bertstudio.cli import main

    binary = tmp_path / name
    binary.write_bytes(bytes(range(256)) * 4)
    assert main(["classify", "--model", str(checkpoint_factory("bert", "SequenceClassification")),
                 "--file", str(binary)]) == 1
    err = capsys.readouterr().err
    assert str(binary) in err and "Traceback" not in err and len(err.strip().splitlines()) <= 2
    assert main(["classify", "--model", "unused", "--file", str(tmp_path)]) == 1  # checked before loading
    assert "is a folder" in capsys.readouterr().err
