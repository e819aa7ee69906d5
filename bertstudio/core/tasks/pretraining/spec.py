"""Pre-training: the spec the registry finds (tasks.spec.all_specs), every function it names imported from
this package, so a grep for a function finds who uses it."""

from __future__ import annotations

from bertstudio.core.tasks.pretraining.train import Pretraining
from bertstudio.core.tasks.spec import TaskSpec

SPEC = TaskSpec(
    key="pretraining", title="Pre-training", model_class="AutoModelForPreTraining",
    default_model="bert-base-uncased", order=200, trainables=(Pretraining(),),
)
