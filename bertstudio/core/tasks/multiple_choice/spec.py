"""Multiple choice: the spec the registry finds (tasks.spec.all_specs), every function it names imported from
this package, so a grep for a function finds who uses it."""

from __future__ import annotations

from bertstudio.core.evaluate.metrics import accuracy_scores
from bertstudio.core.tasks.multiple_choice import compare, evaluate, explain, run, snippet, suite, whatif
from bertstudio.core.tasks.multiple_choice.train import MultipleChoice
from bertstudio.core.tasks.spec import (
    CounterfactualAdapter,
    EvaluateAdapter,
    ExplainAdapter,
    Part,
    SuiteAdapter,
    SuiteFix,
    TaskSpec,
)

SPEC = TaskSpec(
    key="multiple-choice", title="Multiple choice", command="choice", model_class="AutoModelForMultipleChoice",
    default_model="bert-base-uncased", trained_as="ForMultipleChoice", run=run, compare=compare, order=70,
    script=snippet.build,
    parts=(Part("prompt", "the context the endings continue", "--prompt", "P"),
           Part("choice", "a candidate ending; give it two or more times", "--choice", "ENDING", many=True,
                required=False)),
    counterfactual=CounterfactualAdapter.of(whatif, choice_logits=whatif.logits),
    explain=ExplainAdapter.of(explain, "the prompt, then one ending per line"),
    evaluate=EvaluateAdapter.of(
        evaluate, "Multiple choice (CSV with choices)", "Tables (*.csv *.tsv *.jsonl)", metrics=accuracy_scores,
        pair_of=evaluate.pair_of, shown_gold=evaluate.shown_gold,
        columns=(("prompt", "Prompt"), ("label", "Correct index")), choice_columns=True, labelled=True,
    ),
    trainables=(MultipleChoice(),),
    suite=SuiteAdapter(parts=("prompt", "choice"), inputs=suite.prompt_and_choices, min_parts=3,
                       expected=suite.expected_choice, expected_in=suite.choice_in_case, read_item=suite.choice_item,
                       meets=suite.meets_choice,
                       fix=SuiteFix(".csv", suite.choice_row, suite.write_rows, suite.extend_data)),
)
