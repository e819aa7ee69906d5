"""QA span decoding equals an independent brute-force reference; the trained MiniLM head answers right.

The reference below shares nothing with bertstudio.core.tasks.qa but the tokenizer: it runs
the model on each window alone (no batching, no padding), takes a softmax over the context
tokens and CLS in plain Python, scores every valid (start, end) pair of every window and
keeps each character span once at its best score.
"""

from __future__ import annotations

import math
import random

import pytest

from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.tasks.qa import QAOptions, answer
from tests.fixtures.trained_qa import (  # noqa: F401 - the session fixture
    HELD_OUT_CITIES,
    HELD_OUT_NAMES,
    TRAIN_CITIES,
    TRAIN_NAMES,
    make_example,
    trained_qa,
)

ARCHS = ["bert", "distilbert", "roberta"]
QUESTION = "where was john born ?"
SHORT = "john was born in paris . mary lives in berlin and works at the school ."
# Several thousand characters; the sentence that answers lies far past the first window.
FILLER = "the cat sat on the mat and the dog ran fast in the house . " * 60
LONG = FILLER + "john was born in paris in france . " + "the old man read a book at night . " * 5


def _softmax(values: list[float]) -> list[float]:
    top = max(values)
    exps = [math.exp(v - top) for v in values]
    total = sum(exps)
    return [x / total for x in exps]


def brute_force(folder, question, context, *, max_seq_len, doc_stride, max_answer_len, top_k,
                align_to_words=False, allow_no_answer=False):
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForQuestionAnswering.from_pretrained(folder).eval()
    encoded = tokenizer(question, context, truncation="only_second", max_length=max_seq_len, stride=doc_stride,
                        return_overflowing_tokens=True, return_offsets_mapping=True)
    best: dict[tuple[int, int], float] = {}
    null = math.inf
    windows = len(encoded["input_ids"])
    for w in range(windows):
        inputs = {k: torch.tensor([encoded[k][w]]) for k in tokenizer.model_input_names if k in encoded}
        with torch.no_grad():
            out = model(**inputs)
        start_logits, end_logits = out.start_logits[0].tolist(), out.end_logits[0].tolist()
        sequence_ids = encoded.sequence_ids(w)
        context_tokens = [i for i, s in enumerate(sequence_ids) if s == 1]
        cls = encoded["input_ids"][w].index(tokenizer.cls_token_id)
        allowed = [cls] + context_tokens
        p_start = dict(zip(allowed, _softmax([start_logits[i] for i in allowed]), strict=True))
        p_end = dict(zip(allowed, _softmax([end_logits[i] for i in allowed]), strict=True))
        null = min(null, p_start[cls] * p_end[cls])
        offsets = encoded["offset_mapping"][w]
        words = encoded.word_ids(w)
        for s in context_tokens:
            for e in context_tokens:
                if not s <= e < s + max_answer_len:
                    continue
                if align_to_words:
                    span = (encoded.word_to_chars(w, words[s], sequence_index=1).start,
                            encoded.word_to_chars(w, words[e], sequence_index=1).end)
                else:
                    span = (offsets[s][0], offsets[e][1])
                if span[1] <= span[0]:
                    continue  # no characters (a byte-level piece that is only a space)
                score = p_start[s] * p_end[e]
                if score > best.get(span, -1.0):
                    best[span] = score
    ranked = sorted(best.items(), key=lambda item: -item[1])[:top_k]
    answers = [{"answer": context[s:e], "score": score, "start": s, "end": e} for (s, e), score in ranked]
    return answers, windows, null


def _check(ours, theirs) -> None:
    assert [(a.start, a.end, a.answer) for a in ours.answers] == [(t["start"], t["end"], t["answer"]) for t in theirs]
    assert [a.score for a in ours.answers] == pytest.approx([t["score"] for t in theirs], rel=1e-4, abs=1e-9)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("align", [False, True])
def test_short_context_equals_brute_force(checkpoint_factory, arch: str, align: bool) -> None:
    folder = checkpoint_factory(arch, "QuestionAnswering")
    loaded = load_model(LoadRequest(str(folder), "qa"))
    options = QAOptions(top_k=10, max_answer_len=4, max_seq_len=64, doc_stride=16, align_to_words=align)
    result = answer(loaded, QUESTION, SHORT, options)
    theirs, windows, _ = brute_force(folder, QUESTION, SHORT, max_seq_len=64, doc_stride=16, max_answer_len=4,
                                     top_k=10, align_to_words=align)
    assert len(result.windows) == windows == 1
    _check(result, theirs)
    assert result.to_json() == [a.to_json() for a in result.answers]
    for a in result.answers:
        assert SHORT[a.start:a.end] == a.answer and a.answer


@pytest.mark.parametrize("arch", ARCHS)
def test_long_context_windows_equal_brute_force(checkpoint_factory, arch: str) -> None:
    folder = checkpoint_factory(arch, "QuestionAnswering")
    loaded = load_model(LoadRequest(str(folder), "qa"))
    assert len(LONG) > 3000
    options = QAOptions(top_k=25, max_answer_len=6, max_seq_len=64, doc_stride=20, align_to_words=False)
    result = answer(loaded, QUESTION, LONG, options)
    theirs, windows, _ = brute_force(folder, QUESTION, LONG, max_seq_len=64, doc_stride=20, max_answer_len=6,
                                     top_k=25)
    assert len(result.windows) == windows > 10
    _check(result, theirs)
    # Windows overlap, cover the whole context, and the answering sentence is past the first one.
    assert result.windows[0][0] == 0 and result.windows[-1][1] >= len(LONG.rstrip())
    assert all(b[0] < a[1] for a, b in zip(result.windows, result.windows[1:], strict=False))
    assert LONG.index("paris") > result.windows[0][1]
    assert len(result.tokens.tokens) == len(result.tokens.start_scores) == len(set(result.tokens.spans))


def test_default_options_are_the_pipelines(checkpoint_factory) -> None:
    options = QAOptions()
    assert (options.top_k, options.doc_stride, options.max_answer_len, options.max_seq_len,
            options.max_question_len) == (1, 128, 15, 384, 64)
    # On a 64-token model the default stride cannot fit: it is lowered, and the user is told.
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "QuestionAnswering")), "qa"))
    result = answer(loaded, QUESTION, LONG)
    assert len(result.answers) == 1
    assert any("stride lowered" in note.text for note in result.notes)
    assert any("overlapping windows" in note.text for note in result.notes)


def test_no_answer_and_threshold(checkpoint_factory) -> None:
    folder = checkpoint_factory("bert", "QuestionAnswering")
    loaded = load_model(LoadRequest(str(folder), "qa"))
    kwargs = dict(max_seq_len=64, doc_stride=16, max_answer_len=4, top_k=3)
    _, _, null = brute_force(folder, QUESTION, LONG, **kwargs)
    plain = answer(loaded, QUESTION, LONG, QAOptions(**kwargs))
    result = answer(loaded, QUESTION, LONG, QAOptions(**kwargs, allow_no_answer=True, null_threshold=-1.0))
    assert result.null_score == pytest.approx(null, rel=1e-4)
    assert result.best.is_null and result.best.to_json() == {"answer": "", "score": result.null_score,
                                                            "start": 0, "end": 0}
    assert [a.start for a in result.answers[1:]] == [a.start for a in plain.answers[:2]]
    never = answer(loaded, QUESTION, LONG, QAOptions(**kwargs, allow_no_answer=True, null_threshold=1.0))
    assert never.answers == plain.answers


@pytest.mark.parametrize(("question", "context", "match"), [
    ("", SHORT, "question is empty"),
    ("  ", SHORT, "question is empty"),
    (QUESTION, "", "context is empty"),
    ("who " * 70 + "?", SHORT, "at most 64"),
])
def test_bad_input(checkpoint_factory, question: str, context: str, match: str) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "QuestionAnswering")), "qa"))
    with pytest.raises(InputError, match=match):
        answer(loaded, question, context)


@pytest.mark.parametrize("options", [QAOptions(top_k=0), QAOptions(max_answer_len=0), QAOptions(doc_stride=-1)])
def test_bad_options(checkpoint_factory, options: QAOptions) -> None:
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "QuestionAnswering")), "qa"))
    with pytest.raises(InputError):
        answer(loaded, QUESTION, SHORT, options)


def test_model_without_qa_head_warns(checkpoint_factory) -> None:
    from bertstudio.core.jobs import run_spec
    from bertstudio.core.progress import TaskControl
    from bertstudio.core.tasks.qa import QAInput
    from bertstudio.core.tasks.qa.spec import SPEC

    request = LoadRequest(str(checkpoint_factory("bert", "MaskedLM")), "qa")
    outcome = run_spec(SPEC, request, QAInput(QUESTION, SHORT), TaskControl())
    warning = outcome.notes[0]
    assert warning.level == "warning" and "no trained qa head" in warning.text and "qa_outputs" in warning.text


@pytest.mark.slow
def test_trained_minilm_answers_held_out_paragraphs(trained_qa) -> None:  # noqa: F811
    loaded = load_model(LoadRequest(str(trained_qa), "qa"))
    assert not loaded.info.head_warning
    rng = random.Random(2024)
    examples = [make_example(rng, HELD_OUT_NAMES, HELD_OUT_CITIES) for _ in range(30)]
    for _question, context, _ in examples:
        assert not any(word in context.lower() for word in TRAIN_NAMES + TRAIN_CITIES)
    right = sum(answer(loaded, q, c).best.answer == a for q, c, a in examples)
    assert right >= 27, f"{right}/30 held-out questions answered right"
    context = "Kenji was born in Osaka in 1972. Kenji works as a pilot."
    best = answer(loaded, "Where was Kenji born?", context).best
    assert (best.answer, context[best.start:best.end]) == ("Osaka", "Osaka") and best.score > 0.5
    assert answer(loaded, "When was Kenji born?", context).best.answer == "1972"
    assert answer(loaded, "What does Kenji work as?", context).best.answer == "pilot"


@pytest.mark.slow
def test_trained_minilm_finds_answer_past_first_window(trained_qa) -> None:  # noqa: F811
    loaded = load_model(LoadRequest(str(trained_qa), "qa"))
    filler = "The weather was mild and the market was busy all week. " * 40
    context = filler + "Kenji was born in Osaka in 1972. Kenji works as a pilot. " + filler[:500]
    result = answer(loaded, "Where was Kenji born?", context, QAOptions(top_k=3))
    assert len(result.windows) >= 2 and context.index("Osaka") > result.windows[0][1]
    best = result.best
    assert best.answer == "Osaka" and best.start == context.index("Osaka") and best.window > 0


def test_cli_json_equals_core(checkpoint_factory, tmp_path, capsys) -> None:
    import json

    from bertstudio.cli import main

    folder = checkpoint_factory("bert", "QuestionAnswering")
    loaded = load_model(LoadRequest(str(folder), "qa"))
    expected = answer(loaded, QUESTION, LONG, QAOptions(top_k=3, max_answer_len=5, doc_stride=10)).to_json()
    file = tmp_path / "context.txt"
    file.write_text(LONG, encoding="utf-8")
    code = main(["qa", "--model", str(folder), "--question", QUESTION, "--context-file", str(file),
                 "--top-k", "3", "--max-answer-len", "5", "--doc-stride", "10", "--json"])
    out = capsys.readouterr()
    assert code == 0
    got = json.loads(out.out)
    assert [set(a) for a in got] == [{"answer", "score", "start", "end"}] * 3
    assert [(a["start"], a["end"], a["answer"]) for a in got] == [(a["start"], a["end"], a["answer"]) for a in expected]
    assert main(["qa", "--model", str(folder), "--question", QUESTION, "--context", SHORT]) == 0
    assert "1." in capsys.readouterr().out


def test_cli_errors(checkpoint_factory, tmp_path, capsys) -> None:
    from bertstudio.cli import main

    folder = str(checkpoint_factory("bert", "QuestionAnswering"))
    assert main(["qa", "--model", folder, "--question", " ", "--context", SHORT, "--json"]) == 1
    assert "question is empty" in capsys.readouterr().err
    assert main(["qa", "--model", folder, "--question", QUESTION, "--context-file", str(tmp_path / "no.txt")]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert main(["qa", "--model", folder, "--question", QUESTION, "--context", SHORT, "--top-k", "0"]) == 1
    assert "top-k" in capsys.readouterr().err


# -- comparing two models ------------------------------------------------------------------------
def _overlap(a: tuple[int, int], b: tuple[int, int]) -> float:
    shared = set(range(*a)) & set(range(*b))
    return len(shared) / len(set(range(*a)) | set(range(*b)))


def test_compare_adapter(checkpoint_factory, tmp_path) -> None:
    from bertstudio.core.tasks.qa import compare
    from tests.fixtures.checkpoints import build_checkpoint

    first = load_model(LoadRequest(str(checkpoint_factory("bert", "QuestionAnswering")), "qa"))
    second = load_model(LoadRequest(str(build_checkpoint(tmp_path / "qa-seed1", "bert", "QuestionAnswering",
                                                         seed=1)), "qa"))
    a = answer(first, QUESTION, SHORT, QAOptions(top_k=3))
    b = answer(second, QUESTION, SHORT, QAOptions(top_k=3))
    same = compare(a, a)
    assert not same.changed and same.overlap == 1.0 and same.score_delta == 0.0
    diff = compare(a, b)
    span_a, span_b = (a.best.start, a.best.end), (b.best.start, b.best.end)
    assert diff.span_a == span_a and diff.span_b == span_b
    assert (diff.text_a, diff.text_b) == (a.best.answer, b.best.answer)
    assert diff.changed == (span_a != span_b)
    assert diff.overlap == pytest.approx(_overlap(span_a, span_b))
    assert diff.score_delta == pytest.approx(b.best.score - a.best.score)
    # The empty answer has no span; against a real span nothing overlaps, and the score still compares.
    null = answer(first, QUESTION, SHORT, QAOptions(allow_no_answer=True, null_threshold=-1.0))
    assert null.best.is_null
    against = compare(null, b)
    assert against.changed and against.span_a is None and against.overlap == 0.0
    assert against.score_delta == pytest.approx(b.best.score - null.best.score)
    with pytest.raises(InputError, match="different questions or contexts"):
        compare(a, answer(first, QUESTION, LONG))


def test_cli_compare_json(checkpoint_factory, tmp_path, capsys) -> None:
    import json

    from bertstudio.cli import main
    from tests.fixtures.checkpoints import build_checkpoint

    folder_a = str(checkpoint_factory("bert", "QuestionAnswering"))
    folder_b = str(build_checkpoint(tmp_path / "qa-seed1", "bert", "QuestionAnswering", seed=1))
    code = main(["qa", "--model", folder_a, "--question", QUESTION, "--context", SHORT, "--top-k", "3",
                 "--compare", folder_b, "--json"])
    out = capsys.readouterr()
    assert code == 0
    got = json.loads(out.out)
    assert set(got) == {"model", "result", "compare", "notes"} and got["model"] == folder_a
    assert set(got["compare"]) == {"model", "result", "differences"} and got["compare"]["model"] == folder_b
    options = QAOptions(top_k=3)
    a = answer(load_model(LoadRequest(folder_a, "qa")), QUESTION, SHORT, options)
    b = answer(load_model(LoadRequest(folder_b, "qa")), QUESTION, SHORT, options)
    for shown, expected in ((got["result"], a.to_json()), (got["compare"]["result"], b.to_json())):
        assert [(x["answer"], x["start"], x["end"]) for x in shown] == [
            (x["answer"], x["start"], x["end"]) for x in expected]
        assert [x["score"] for x in shown] == pytest.approx([x["score"] for x in expected], abs=1e-6)
    assert [x["answer"] for x in got["result"]] != [x["answer"] for x in got["compare"]["result"]]
    diff = got["compare"]["differences"]
    span_a, span_b = (a.best.start, a.best.end), (b.best.start, b.best.end)
    assert diff["span_a"] == list(span_a) and diff["span_b"] == list(span_b)
    assert diff["text_a"] == a.best.answer and diff["text_b"] == b.best.answer
    assert diff["changed"] == (span_a != span_b)
    assert diff["overlap"] == pytest.approx(_overlap(span_a, span_b))
    assert diff["score_delta"] == pytest.approx(b.best.score - a.best.score)
    # Plain text: both models' answers and the differences.
    assert main(["qa", "--model", folder_a, "--question", QUESTION, "--context", SHORT,
                 "--compare", folder_b]) == 0
    text = capsys.readouterr().out
    assert f"A: {folder_a}" in text and f"B: {folder_b}" in text and "overlap" in text
    assert ("span changed" if diff["changed"] else "span unchanged") in text
    # A second model without a QA head cannot be read at all: a clear error, exit 1.
    assert main(["qa", "--model", folder_a, "--question", QUESTION, "--context", SHORT,
                 "--compare", str(tmp_path / "missing"), "--json"]) == 1
    assert capsys.readouterr().err


@pytest.mark.parametrize("command", [
    ["explain", "--task", "qa"], ["head-importance", "--task", "qa"], ["export", "--task", "qa", "--no-speed"]])
def test_every_consumer_refuses_a_token_classifier_as_qa(checkpoint_factory, tmp_path, capfd, command) -> None:  # noqa: ANN001
    """Found by the fuzz harness (issue 40): only `qa` checked the span head's 2 labels; explain, head
    importance and export ran the 5-label head into the model's forward: an internal error (exit 2)."""
    from tests.conftest import run_cli

    token_classifier = str(checkpoint_factory("bert", "TokenClassification"))
    extra = ["--output", str(tmp_path / "m.onnx")] if command[0] == "export" else \
        ["--question", QUESTION, "--context", SHORT]
    done = run_cli(capfd, *command, "--model", token_classifier, *extra)
    assert done.returncode == 1 and "needs 2 (answer start and end)" in done.stderr, done.stderr
    assert not (tmp_path / "m.onnx").exists()


def test_cli_refuses_bad_inputs_in_one_line(checkpoint_factory, tmp_path, capsys) -> None:
    """A token-classification checkpoint, a binary or folder context file: exit 1, one message."""
    from bertstudio.cli import main

    token_classifier = str(checkpoint_factory("bert", "TokenClassification"))
    assert main(["qa", "--model", token_classifier, "--question", QUESTION, "--context", SHORT]) == 1
    err = capsys.readouterr().err
    assert "needs 2 (answer start and end)" in err and "Traceback" not in err
    binary = tmp_path / "context.bin"
    binary.write_bytes(b"\xff\xfe\x00\x81\x00binary")
    folder = str(checkpoint_factory("bert", "QuestionAnswering"))
    assert main(["qa", "--model", folder, "--question", QUESTION, "--context-file", str(binary)]) == 1
    err = capsys.readouterr().err
    assert "not UTF-8 text" in err and str(binary) in err
    assert main(["qa", "--model", folder, "--question", QUESTION, "--context-file", str(tmp_path)]) == 1
    assert "is a folder" in capsys.readouterr().err
