"""Pre-training heads (MLM + NSP): a model class for training/, not a one-input task."""

from __future__ import annotations

from bertstudio.core.tasks.spec import TaskSpec

SPEC = TaskSpec(
    key="pretraining", title="Pre-training", model_class="AutoModelForPreTraining",
    default_model="bert-base-uncased", order=200,
)
