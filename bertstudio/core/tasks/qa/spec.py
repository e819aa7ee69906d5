"""Question answering: the spec the registry finds (tasks.spec.all_specs), every function it names imported from
this package, so a grep for a function finds who uses it."""

from __future__ import annotations

from bertstudio.core.evaluate.rows import pair_of_two
from bertstudio.core.tasks.qa import check_span_config, compare, evaluate, explain, run, snippet, suite
from bertstudio.core.tasks.qa.train import QuestionAnswering
from bertstudio.core.tasks.spec import EvaluateAdapter, ExplainAdapter, Part, SuiteAdapter, SuiteFix, TaskSpec

SPEC = TaskSpec(
    key="qa", title="Question answering", model_class="AutoModelForQuestionAnswering",
    default_model="distilbert/distilbert-base-cased-distilled-squad", run=run, compare=compare, order=40,
    script=snippet.build, check_config=check_span_config,
    parts=(Part("question", "the question", "--question"),
           Part("context", "the text holding the answer", "--context", file="--context-file")),
    explain=ExplainAdapter.of(explain, "the question, then the context"),
    evaluate=EvaluateAdapter.of(
        evaluate, "Question answering (SQuAD JSON or CSV)", "SQuAD or tables (*.json *.csv *.tsv *.jsonl)",
        metrics=evaluate.metrics, pair_of=pair_of_two, correct=evaluate.correct, shown_gold=evaluate.shown_gold,
        label_of=evaluate.label_of,
        columns=(("question", "Question"), ("context", "Context"), ("answer", "Answer")),
    ),
    trainables=(QuestionAnswering(),),
    suite=SuiteAdapter(parts=("question", "context"), inputs=suite.question_and_context, min_parts=2, max_parts=2,
                       expected=suite.expected_answer, same=suite.same_answer, meets=suite.meets_answer, gold=("?",),
                       fix=SuiteFix(".json", suite.located_row, suite.write_rows, suite.extend_data)),
)
