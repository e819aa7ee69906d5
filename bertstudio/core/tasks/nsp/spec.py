"""Next sentence: the spec the registry finds (tasks.spec.all_specs), every function it names imported from
this package, so a grep for a function finds who uses it."""

from __future__ import annotations

from bertstudio.core.evaluate.metrics import label_metrics
from bertstudio.core.evaluate.rows import pair_of_two
from bertstudio.core.tasks.nsp import PATCH_READER, compare, evaluate, explain, run, snippet, steps, suite, whatif
from bertstudio.core.tasks.spec import (
    CounterfactualAdapter,
    EvaluateAdapter,
    ExplainAdapter,
    SuiteAdapter,
    TaskSpec,
    sentence_parts,
)

SPEC = TaskSpec(
    key="nsp", title="Next sentence", model_class="AutoModelForNextSentencePrediction",
    default_model="bert-base-uncased", run=run, compare=compare, order=20,
    script=snippet.build, pipeline=steps.PIPELINE,
    parts=sentence_parts("the first sentence", "one or more candidate next sentences"),
    counterfactual=CounterfactualAdapter.of(whatif, edits=(0, 1)),
    explain=ExplainAdapter.of(explain, "sentence A, then sentence B"),
    evaluate=EvaluateAdapter.of(
        evaluate, "Next sentence (pairs with 0/1 labels)", "Tables (*.csv *.tsv *.jsonl)", metrics=label_metrics,
        labels=("IsNext", "NotNext"), pair_of=pair_of_two,
        columns=(("text", "Sentence A"), ("pair", "Sentence B"), ("label", "Label")), labelled=True,
    ),
    patch_reader=PATCH_READER,
    suite=SuiteAdapter(parts=("first", "second"), inputs=suite.sentence_pair, min_parts=2, max_parts=2,
                       labels=suite.nsp_labels),
    onnx_runtime=True,
)
