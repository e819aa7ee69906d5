"""Classification: the spec the registry finds (tasks.spec.all_specs), every function it names imported from
this package, so a grep for a function finds who uses it."""

from __future__ import annotations

from bertstudio.core.evaluate.rows import pair_of_two
from bertstudio.core.tasks.classification import (
    PATCH_READER,
    compare,
    evaluate,
    explain,
    regression,
    run,
    snippet,
    steps,
    suite,
    whatif,
)
from bertstudio.core.tasks.classification.train import TextClassification
from bertstudio.core.tasks.classification.train_distill import Distillation
from bertstudio.core.tasks.classification.train_regression import Regression
from bertstudio.core.tasks.spec import (
    CounterfactualAdapter,
    EvaluateAdapter,
    ExplainAdapter,
    Part,
    SuiteAdapter,
    TaskSpec,
)

SPEC = TaskSpec(
    key="classification", title="Classification", command="classify",
    model_class="AutoModelForSequenceClassification",
    default_model="distilbert/distilbert-base-uncased-finetuned-sst-2-english",
    trained_as="ForSequenceClassification", run=run, compare=compare, order=60,
    script=snippet.build, pipeline=steps.PIPELINE,
    parts=(Part("text", "the text to classify (or use --file)", required=False),
           Part("pair", "second text of a pair (e.g. is B a paraphrase of the text?)", "--pair", "B", required=False)),
    counterfactual=CounterfactualAdapter.of(whatif, edits=(0, 1)),
    explain=ExplainAdapter.of(explain, "the text (and its pair on a second line)", examples=explain.examples),
    evaluate=EvaluateAdapter.of(
        evaluate, "Classification (CSV/TSV/JSONL)", "Tables (*.csv *.tsv *.jsonl)", pair_of=pair_of_two,
        # regression.py hands a regression head (train --task regression) its own steps, others on
        prepare=regression.prepare, predict=regression.predict, metrics=regression.metrics,
        correct=regression.correct, error_order=regression.error_order,
        columns=(("text", "Text"), ("pair", "Second text"), ("label", "Label")), labelled=True,
    ),
    patch_reader=PATCH_READER,
    trainables=(TextClassification(), Regression(), Distillation()),
    suite=SuiteAdapter(parts=("text", "pair"), inputs=suite.text_and_pair, max_parts=2),
    onnx_runtime=True,
)
