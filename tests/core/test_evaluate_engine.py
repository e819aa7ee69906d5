"""Evaluate's predictors on the batch engine (issue 28, second step): the masked LM's numbers equal the
loop it replaced (each seeded token masked alone, written here as the reference), NER's tags and
scores equal transformers' token-classification pipeline."""

from __future__ import annotations

import pytest

from bertstudio.core.evaluate.predict import EvalOptions
from bertstudio.core.evaluate.readers import Example
from bertstudio.core.models import LoadRequest, load_model
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.fill_mask.evaluate import masked_positions, predict

TEXTS = ["the cat sat on the mat", "a dog", "paris is the capital of france and a big city with many people",
         "she read the book again", "ok"]


def reference(loaded, texts: list[str], options: EvalOptions) -> list[list[tuple[int, int, int, float]]]:  # noqa: ANN001
    """The old loop: (gold id, top-1 id, gold in top 5, -log P(gold)) per masked token, per text."""
    import torch

    tokenizer, model = loaded.tokenizer, loaded.model
    encoded = tokenizer(texts, truncation=True, max_length=loaded.info.max_length, return_special_tokens_mask=True)
    found: list[list[tuple[int, int, int, float]]] = [[] for _ in texts]
    with torch.inference_mode():
        for n, (ids, special) in enumerate(zip(encoded["input_ids"], encoded["special_tokens_mask"], strict=True)):
            for position in masked_positions(special, n, options):
                row = list(ids)
                row[position] = tokenizer.mask_token_id
                logits = model(input_ids=torch.tensor([row])).logits[0, position].float()
                log_probs = torch.log_softmax(logits, -1)
                top5 = log_probs.topk(5).indices.tolist()
                found[n].append((ids[position], top5[0], int(ids[position] in top5), float(-log_probs[ids[position]])))
    return found


def test_masked_lm_on_the_engine_equals_the_per_row_loop(checkpoint_factory) -> None:  # noqa: ANN001
    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "MaskedLM")), "fill-mask"))
    options = EvalOptions(batch_size=3, mask_share=0.4)
    examples = [Example(n + 1, text, text, None) for n, text in enumerate(TEXTS)]
    predictions, _ = predict(loaded, examples, TaskControl(), options)
    expected = reference(loaded, TEXTS, options)
    for prediction, tokens in zip(predictions, expected, strict=True):
        stats = prediction.value
        assert stats.masked == len(tokens) > 0
        assert stats.top1 == sum(g == t for g, t, _, _ in tokens)
        assert stats.top5 == sum(f for _, _, f, _ in tokens)
        assert stats.nll == pytest.approx(sum(x for _, _, _, x in tokens), abs=1e-4)
        assert stats.gold == tuple(loaded.tokenizer.convert_ids_to_tokens([g for g, _, _, _ in tokens]))


def test_ner_on_the_engine_equals_the_pipeline(checkpoint_factory) -> None:  # noqa: ANN001
    """Tags and scores equal transformers' token-classification pipeline (word aggregation 'first')."""
    from bertstudio.core.tasks.ner.evaluate import predict as tag_rows
    from bertstudio.core.tasks.ner.evaluate import words_to_tags

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "TokenClassification")), "ner"))
    sentences = [text.split() for text in TEXTS]
    examples = [Example(n + 1, " ".join(words), tuple(words), ("O",) * len(words)) for n, words in
                enumerate(sentences)]
    predictions, _ = tag_rows(loaded, examples, TaskControl(), EvalOptions(batch_size=2))
    pipe = loaded.pipeline("token-classification")
    for prediction, words in zip(predictions, sentences, strict=True):
        entities = pipe(" ".join(words), aggregation_strategy="first")
        assert prediction.value == words_to_tags(words, entities)
        expected = sum(float(e["score"]) for e in entities) / len(entities) if entities else 1.0
        assert prediction.score == pytest.approx(expected, abs=1e-5)
    assert any(tag != "O" for p in predictions for tag in p.value)  # the random head tags something


def test_qa_on_the_engine_equals_answer_per_question(checkpoint_factory) -> None:  # noqa: ANN001
    """Every window of the file through the engine: the best answer and its score equal
    `tasks.qa.answer` run on each question alone (a long context read in several windows too)."""
    from bertstudio.core.tasks.qa import QAOptions, answer
    from bertstudio.core.tasks.qa.evaluate import predict as answer_rows

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "QuestionAnswering")), "qa"))
    long_context = " ".join(TEXTS * 30)
    rows = [("where is the cat?", TEXTS[0]), ("what is big?", TEXTS[2]), ("who read?", long_context),
            ("what?", TEXTS[3])]
    examples = [Example(n + 1, q, (q, c), () if n == 1 else ("x",)) for n, (q, c) in enumerate(rows)]
    predictions, _ = answer_rows(loaded, examples, TaskControl(), EvalOptions(batch_size=3))
    settings = QAOptions(allow_no_answer=True)
    assert answer(loaded, rows[2][0], rows[2][1], settings).windows[1:]  # the long one has several windows
    for prediction, (question, context) in zip(predictions, rows, strict=True):
        best = answer(loaded, question, context, settings).best
        assert prediction.value == (best.answer if best is not None else "")
        assert prediction.score == pytest.approx(best.score if best is not None else 0.0, abs=1e-5)


def test_evaluate_fills_the_token_budget_unless_a_batch_size_is_given(checkpoint_factory, tmp_path) -> None:  # noqa: ANN001
    """No batch size: as many rows per forward as the engine's budget holds (a GPU forward of 32 short rows
    was ~2,000 tokens); a given one still caps each forward."""
    from bertstudio.core.evaluate.evaluation import evaluate
    from bertstudio.core.evaluate.readers import read_dataset

    loaded = load_model(LoadRequest(str(checkpoint_factory("bert", "SequenceClassification")), "classification"))
    label = loaded.info.id2label[0]
    data = tmp_path / "short.csv"
    data.write_text("text,label\n" + "".join(f"the cat sat {i},{label}\n" for i in range(100)), encoding="utf-8")
    dataset = read_dataset("classification", data)

    def forwards(options: EvalOptions) -> int:
        events: list[str] = []
        evaluate(loaded, dataset, TaskControl(on_progress=lambda e: events.append(e.message)), options)
        return sum(message.startswith("Classified") for message in events)

    assert forwards(EvalOptions()) == 1
    assert forwards(EvalOptions(batch_size=32)) == 4
