"""The model card of a cross-validation run (issue 41 item 8): README.md in the run's folder, beside
its fold models, with the per-fold and mean +- sd metrics and, where they were looked for, the label
issues cleanlab found. Each fold model keeps the card its own training wrote."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bertstudio.core.training.base import Data
from bertstudio.core.training.config import TrainConfig
from bertstudio.core.training.model_card import CardFacts, write_card


def write_cv_card(config: TrainConfig, data: Any, classes: Sequence[str], outcome: Any,
                  issues: Sequence[Any] | None = None) -> bool:
    """README.md of `outcome.output_dir` (a folder this run marked as ours); `issues`: LabelIssue rows."""
    facts = CardFacts.of_run(config, Data(train=data, eval=None, labels=list(classes)),
                             {f"cv_{name}": value for name, value in outcome.mean.items()})
    facts = replace(facts, cross_validation={"folds": [fold.metrics for fold in outcome.folds],
                                             "mean": outcome.mean, "sd": outcome.sd},
                    label_issues=None if issues is None else [issue.to_json() for issue in issues])
    return write_card(Path(outcome.output_dir), facts)
