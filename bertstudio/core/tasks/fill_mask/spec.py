"""Fill-mask: the spec the registry finds (tasks.spec.all_specs), every function it names imported from
this package, so a grep for a function finds who uses it."""

from __future__ import annotations

from bertstudio.core.tasks.fill_mask import PATCH_READER, compare, evaluate, explain, inputs_for, run, snippet, whatif
from bertstudio.core.tasks.fill_mask.layers import per_layer
from bertstudio.core.tasks.fill_mask.suite import first_mask_words
from bertstudio.core.tasks.spec import CounterfactualAdapter, EvaluateAdapter, ExplainAdapter, Part, TaskSpec

SPEC = TaskSpec(
    key="fill-mask", title="Fill-mask", model_class="AutoModelForMaskedLM", default_model="bert-base-uncased",
    run=run, compare=compare, inputs_for=inputs_for, order=10, mask_words=first_mask_words,
    script=snippet.build, parts=(Part("text", "text with one or more of the model's mask tokens"),),
    counterfactual=CounterfactualAdapter.of(whatif, masked_lm=True),
    explain=ExplainAdapter.of(explain, "the text with a mask", one_text=True, per_layer=per_layer),
    evaluate=EvaluateAdapter.of(
        evaluate, "Masked LM (plain text)", "Text (*.txt)", metrics=evaluate.metrics, pair_of=evaluate.pair_of,
        correct=evaluate.correct, shown_gold=evaluate.shown_gold, row_accuracy=False,
    ),
    patch_reader=PATCH_READER,
)
