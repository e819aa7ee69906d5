"""NER: the spec the registry finds (tasks.spec.all_specs), every function it names imported from
this package, so a grep for a function finds who uses it."""

from __future__ import annotations

from bertstudio.core.tasks.ner import PATCH_READER, compare_results, evaluate, explain, run, snippet, suite
from bertstudio.core.tasks.ner.train import TokenClassification
from bertstudio.core.tasks.spec import EvaluateAdapter, ExplainAdapter, Part, SuiteAdapter, SuiteFix, TaskSpec

SPEC = TaskSpec(
    key="ner", title="NER", model_class="AutoModelForTokenClassification",
    default_model="dslim/bert-base-NER", trained_as="ForTokenClassification",
    run=run, compare=compare_results, order=30,
    script=snippet.build, parts=(Part("text", "the text to tag"),),
    explain=ExplainAdapter.of(explain, "the text", one_text=True),
    evaluate=EvaluateAdapter.of(
        evaluate, "Token classification (CoNLL)", "CoNLL (*.conll *.txt *.iob *.bio)", prepare=evaluate.prepare,
        metrics=evaluate.metrics, pair_of=evaluate.pair_of, shown_gold=evaluate.shown_gold, per_label="type",
    ),
    patch_reader=PATCH_READER,
    trainables=(TokenClassification(),),
    suite=SuiteAdapter(parts=("text",), inputs=suite.words, max_parts=1, expected=suite.expected_tags,
                       meets=suite.meets_tags,
                       fix=SuiteFix(".conll", suite.tagged_row, suite.write_rows, suite.extend_data)),
    onnx_runtime=True,
)
