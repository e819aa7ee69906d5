"""Similarity: the spec the registry finds (tasks.spec.all_specs), every function it names imported from
this package, so a grep for a function finds who uses it."""

from __future__ import annotations

from bertstudio.core.evaluate.rows import pair_of_two
from bertstudio.core.tasks.similarity import compare, evaluate, explain, run, snippet
from bertstudio.core.tasks.spec import EvaluateAdapter, ExplainAdapter, TaskSpec, sentence_parts

SPEC = TaskSpec(
    key="similarity", title="Similarity", model_class="AutoModel",
    default_model="sentence-transformers/all-MiniLM-L6-v2", run=run, compare=compare, order=25,
    ignore_missing=("pooler.",), script=snippet.build,
    parts=sentence_parts("the sentence the others are compared with", "one or more sentences to compare with A"),
    explain=ExplainAdapter.of(explain, "sentence A, then sentence B"),
    evaluate=EvaluateAdapter.of(
        evaluate, "Similarity (sentence pairs with gold scores, STS)", "Tables (*.csv *.tsv *.jsonl)",
        metrics=evaluate.metrics, pair_of=pair_of_two, correct=evaluate.correct, shown_gold=evaluate.shown_gold,
        error_order=evaluate.error_order,
        columns=(("text", "Sentence 1"), ("pair", "Sentence 2"), ("label", "Gold score")), row_accuracy=False,
    ),
)
