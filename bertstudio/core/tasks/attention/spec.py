"""Attention: the spec the registry finds (tasks.spec.all_specs), every function it names imported from
this package, so a grep for a function finds who uses it."""

from __future__ import annotations

from bertstudio.core.tasks.attention import attention_differences, run, snippet
from bertstudio.core.tasks.spec import TaskSpec

SPEC = TaskSpec(
    key="attention", title="Attention", model_class="AutoModel", default_model="bert-base-uncased",
    attn_implementation="eager", run=run, compare=attention_differences, order=50, ignore_missing=("pooler.",),
    script=snippet.build,
)
