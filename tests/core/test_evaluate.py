"""Evaluation readers, the SQuAD functions and the metric helpers, checked against the reference
libraries and hand-computed numbers (no model needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.evaluate import metrics as scores
from bertstudio.core.evaluate.predict import EvalOptions
from bertstudio.core.evaluate.readers import EvalColumns, read_dataset
from bertstudio.core.tasks.fill_mask.evaluate import MaskedStats, masked_positions
from bertstudio.core.tasks.fill_mask.evaluate import scores as masked_lm_scores
from bertstudio.core.tasks.ner.evaluate import entities_text, words_to_tags
from bertstudio.core.tasks.ner.evaluate import scores as ner_scores
from bertstudio.core.tasks.qa import squad

DATA = Path(__file__).resolve().parents[1] / "data" / "evaluate"


# -- SQuAD, hand-computed ---------------------------------------------------------------------
def test_squad_normalisation_and_scores_by_hand() -> None:
    assert squad.normalize_answer("  The  Eiffel-Tower!  ") == "eiffeltower"
    assert squad.normalize_answer("An apple, a pear and THE plum.") == "apple pear and plum"
    assert squad.exact_match(["the Eiffel Tower"], "Eiffel Tower.") == 1
    # prediction "in paris france" vs gold "paris": 1 shared token, P = 1/3, R = 1 -> F1 = 0.5
    assert squad.f1(["Paris"], "in Paris France") == pytest.approx(0.5)
    # best over gold answers: "a pilot" -> "pilot" (article dropped) equals the prediction
    assert squad.exact_match(["a pilot", "pilot"], "Pilot") == 1
    # gold "the big red ball" -> [big, red, ball]; pred "red ball game" -> 2 shared, P = 2/3, R = 2/3
    assert squad.f1(["the big red ball"], "red ball game") == pytest.approx(2 / 3)


def test_squad_no_answer_rules_of_v2() -> None:
    assert squad.exact_match([], "") == 1 and squad.f1([], "") == 1.0
    assert squad.exact_match([], "Oslo") == 0 and squad.f1([], "Oslo") == 0.0
    assert squad.f1(["Oslo"], "") == 0.0
    assert squad.exact_match(["", "  "], "") == 1  # golds that normalise to nothing mean "no answer"
    scores = squad.squad_scores([["Oslo"], ["1931"], []], ["Oslo", "in 1931", ""])
    # EM: 1, 0, 1 -> 0.6667; F1: 1, 2*(1/2*1)/(1/2+1) = 2/3, 1 -> 0.8889 (0-1, as every score here)
    assert scores["exact_match"] == pytest.approx(2 / 3)
    assert scores["f1"] == pytest.approx((1 + 2 / 3 + 1) / 3)
    assert scores["has_answer_total"] == 2 and scores["no_answer_exact"] == 1.0


# -- metrics are the libraries' -----------------------------------------------------------------
def test_classification_metrics_equal_scikit_learn() -> None:
    from sklearn.metrics import accuracy_score, confusion_matrix, f1_score, precision_recall_fscore_support

    gold = ["a", "b", "c", "a", "b", "c", "a", "a"]
    pred = ["a", "c", "c", "a", "b", "b", "b", "a"]
    values, per_class, confusion = scores.label_metrics(gold, pred, known=["c", "b", "a", "d"])
    assert values["accuracy"] == accuracy_score(gold, pred)
    assert values["macro_f1"] == pytest.approx(f1_score(gold, pred, average="macro"))
    p, r, f, s = precision_recall_fscore_support(gold, pred, labels=["c", "b", "a"])
    assert confusion.labels == ("c", "b", "a")  # the model's order; "d" never occurs
    assert [per_class[k].f1 for k in confusion.labels] == pytest.approx(list(f))
    assert [per_class[k].support for k in confusion.labels] == list(s)
    assert [list(row) for row in confusion.matrix] == confusion_matrix(gold, pred, labels=["c", "b", "a"]).tolist()
    assert confusion.matrix[2][1] == 1  # gold a (row), predicted b (column)


def test_ner_metrics_equal_seqeval_strict_iob2() -> None:
    from seqeval.metrics import f1_score, precision_score, recall_score
    from seqeval.scheme import IOB2

    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-LOC", "I-LOC", "O"], ["B-PER", "O"]]
    pred = [["B-PER", "B-PER", "O", "B-LOC"], ["O", "B-LOC", "I-LOC", "O"], ["I-PER", "O"]]
    values, per_type = ner_scores(gold, pred)
    kwargs = {"mode": "strict", "scheme": IOB2}
    assert values["precision"] == pytest.approx(precision_score(gold, pred, **kwargs))
    assert values["recall"] == pytest.approx(recall_score(gold, pred, **kwargs))
    assert values["f1"] == pytest.approx(f1_score(gold, pred, **kwargs))
    assert per_type["LOC"].f1 == 1.0 and per_type["PER"].support == 2
    assert values["recall"] == pytest.approx(2 / 4)  # 2 LOC found, 0 of 2 PER (strict IOB2 rejects I- starts)


def test_mcnemar_exact_and_chi_square_by_hand() -> None:
    from scipy.stats import binomtest

    a = [True] * 10 + [False] * 2 + [True] * 5
    b = [False] * 10 + [True] * 2 + [True] * 5
    test = scores.mcnemar(a, b)
    assert (test.a_only, test.b_only) == (10, 2)
    assert test.p_exact == pytest.approx(binomtest(2, 12, 0.5).pvalue)
    assert test.p_exact == pytest.approx(2 * sum(__import__("math").comb(12, k) for k in range(3)) / 2 ** 12)
    # (|10 - 2| - 1)^2 / 12 = 49 / 12 -> chi-square(1) survival
    from scipy.stats import chi2

    assert test.p_chi2 == pytest.approx(chi2.sf(49 / 12, 1))
    assert scores.mcnemar([True, False], [True, False]).p_exact == 1.0


def test_masked_lm_metrics_and_seeded_masking() -> None:
    stats = [MaskedStats(2, 1, 2, 1.0), MaskedStats(2, 2, 2, 0.2)]
    values = masked_lm_scores(stats)
    assert values["top1_accuracy"] == 0.75 and values["top5_accuracy"] == 1.0
    assert values["pseudo_perplexity"] == pytest.approx(__import__("math").exp(1.2 / 4))
    special = [1] + [0] * 20 + [1]
    first = masked_positions(special, 3, EvalOptions(seed=1))
    assert first == masked_positions(special, 3, EvalOptions(seed=1)) and len(first) == 3  # 15% of 20
    assert first != masked_positions(special, 3, EvalOptions(seed=2))
    assert 0 not in first and 21 not in first


def test_word_tags_from_pipeline_entities() -> None:
    words = ["Hannah", "Becker", "visited", "New", "York"]
    entities = [{"entity_group": "PER", "start": 0, "end": 13}, {"entity_group": "LOC", "start": 22, "end": 30}]
    tags = words_to_tags(words, entities)
    assert tags == ("B-PER", "I-PER", "O", "B-LOC", "I-LOC")
    assert entities_text(words, tags) == "Hannah Becker/PER; New York/LOC"


# -- readers --------------------------------------------------------------------------------------
def test_readers_of_every_task() -> None:
    topics = read_dataset("classification", DATA / "topics.csv")
    assert len(topics) == 16 and topics.columns == ("source",) and topics.examples[0].fields["source"] == "blog"
    assert topics.examples[0].line == 2 and topics.examples[0].gold == "food"
    ner = read_dataset("ner", DATA / "ner_heldout.conll")
    assert len(ner) == 10 and ner.examples[2].gold == ("O", "B-PER", "I-PER", "O", "B-LOC", "O", "O", "O")
    squad_rows = read_dataset("qa", DATA / "qa_squad.json")
    assert len(squad_rows) == 8 and squad_rows.examples[5].gold == () and squad_rows.examples[2].gold == (
        "a pilot", "pilot")
    assert squad_rows.examples[0].line == 6  # the line its question is on
    qa_csv = read_dataset("qa", DATA / "qa.csv")
    assert qa_csv.examples[2].inputs[0] == "What does Kenji work as?" and qa_csv.columns == ("kind",)
    assert [x.gold for x in read_dataset("nsp", DATA / "nsp_pairs.csv").examples[:2]] == ["IsNext", "NotNext"]
    choice = read_dataset("multiple-choice", DATA / "choice.csv")
    assert choice.examples[1].gold == 1 and choice.examples[1].inputs[1][1] == "it started to rain."
    assert len(read_dataset("fill-mask", DATA / "smiles.txt")) == 8
    assert len(read_dataset("classification", DATA / "topics.csv").limited(5)) == 5


def test_column_options(tmp_path: Path) -> None:
    table = tmp_path / "t.tsv"
    table.write_text("id\tbody\tgold\textra\n1\thello there\tfood\tx\n", encoding="utf-8")
    data = read_dataset("classification", table, EvalColumns(text="body", label="gold"))
    assert data.examples[0].inputs == ("hello there", None) and set(data.columns) == {"id", "extra"}
    with pytest.raises(InputError, match="no column 'nope'"):
        read_dataset("classification", table, EvalColumns(text="nope", label="gold"))


@pytest.mark.parametrize(("task", "name", "content", "message"), [
    ("classification", "bad.csv", "text,label\nfine,a\n,b\nthird,c,extra\n", r"line 3: empty text.*line 4: 3 fields"),
    ("classification", "bad.jsonl", '{"text": "a", "label": "x"}\n{not json}\n', r"line 2: not valid JSON"),
    ("ner", "bad.conll", "Klaus B-PER\nlives\nin O\nVienna X-LOC\n", r"line 2: .*no tag.*line 4: tag 'X-LOC'"),
    ("ner", "iob1.conll", "Klaus I-PER\nlives O\n", r"line 1: tag 'I-PER' follows 'O'"),
    ("qa", "bad.csv", "question,context,answer\nWho?,Anna came.,Anna\nWhere?,,Oslo\nWhen?,In May.,June\n",
     r"line 3: empty context.*line 4: the answer 'June' is not in the context"),
    ("qa", "bad.json", '{"data": [\n{"paragraphs": [{"context": "c",\n "qas": [{"question": "q?"}]}]}]}',
     r"line 3: data\[0\].paragraphs\[0\].qas\[0\] needs"),
    ("qa", "broken.json", '{"data": [\n,]}', r"not valid JSON \(line 2"),
    ("nsp", "bad.csv", "sentence_a,sentence_b,label\nA.,B.,0\nA.,B.,maybe\n", r"line 3: label 'maybe'"),
    ("multiple-choice", "bad.csv", "prompt,choice0,choice1,label\nP,x,y,1\nP,x,y,2\nP,x,,0\n",
     r"line 3: label '2' is not a choice index 0..1; line 4: needs a prompt and at least two choices"),
])
def test_malformed_files_name_their_lines(tmp_path: Path, task: str, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_dataset(task, path)


def test_missing_file_and_unknown_task(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        read_dataset("classification", tmp_path / "none.csv")
    with pytest.raises(InputError, match="is a folder, not a file"):
        read_dataset("ner", tmp_path)
    (tmp_path / "x.txt").write_text("a\n", encoding="utf-8")
    with pytest.raises(InputError, match="does not support the task 'attention'"):
        read_dataset("attention", tmp_path / "x.txt")


def test_a_lone_choice_column_says_two_choices_are_needed(tmp_path) -> None:  # noqa: ANN001
    """Issue 32 #13c for Evaluate's reader too: one choice column is not "no choice columns"."""
    one = tmp_path / "one.csv"
    one.write_text("prompt,choice0,label\nShe opened the fridge,took out milk,0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"one choice column \('choice0'\).*at least two choices"):
        read_dataset("multiple-choice", one)
