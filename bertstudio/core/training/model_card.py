"""The model card every trained model folder gets: README.md in the Hugging Face Hub's format (a YAML
metadata block made by huggingface_hub's `ModelCardData`, then Markdown) with the hyperparameters,
the per-split metrics, the label distribution, intended use and limitations.

Two sections are left for what other steps find: `CardFacts.cross_validation` (per-fold and
mean +- sd metrics of `train --cv`) and `CardFacts.label_issues` (rows cleanlab flags); a caller
that has them builds the facts with them (`dataclasses.replace`) and calls `write_card` again.
The card is written atomically and carries `CARD_MARK`: a README.md without it is the user's and is
never replaced.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CARD_MARK = "<!-- written by BERT Studio: a README.md without this line is never replaced -->"
CARD_FILE = "README.md"
PIPELINE_TAGS = {  # the trainable's head -> the Hub's pipeline_tag
    "AutoModelForSequenceClassification": "text-classification",
    "AutoModelForTokenClassification": "token-classification",
    "AutoModelForQuestionAnswering": "question-answering",
    "AutoModelForMaskedLM": "fill-mask",
    "AutoModelForPreTraining": "fill-mask",
}
HYPERPARAMETERS = ("epochs", "max_steps", "batch_size", "grad_accum", "learning_rate", "scheduler", "warmup_steps",
                   "warmup_ratio", "weight_decay", "max_length", "seed", "precision", "multi_label", "class_weights",
                   "loss", "focal_gamma", "early_stopping", "lora_rank", "lora_alpha", "lora_dropout", "lora_targets")
SHOWN_ISSUES = 20


@dataclass(frozen=True)
class CardFacts:
    """What the card says; plain values, so a caller can add to it and write it again."""

    task: str  # the trainable's key
    base_model: str
    pipeline_tag: str | None
    labels: tuple[str, ...]
    train_file: str
    eval_file: str | None
    hyperparameters: dict[str, Any]
    metrics: dict[str, float]  # train_* and eval_* as metrics.json holds them
    distribution: dict[str, dict[str, int]] = field(default_factory=dict)  # split -> label -> rows
    multi_label: bool = False
    # hooks for cross-validation (train --cv) and label issues (label-issues): filled where they ran
    cross_validation: dict[str, Any] | None = None  # {"folds": [{metric: v}, ...], "mean": {...}, "sd": {...}}
    label_issues: Sequence[Mapping[str, Any]] | None = None  # [{"row", "given", "suggested", "self_confidence"}]

    @classmethod
    def of_run(cls, config: Any, data: Any, metrics: Mapping[str, float]) -> CardFacts:
        """The facts of a finished run: its settings, the data it read, its final metrics."""
        from bertstudio.core.training.trainable import TRAINABLE

        trainable = TRAINABLE[config.task]
        multi = bool(getattr(config, "multi_label", False))
        return cls(
            task=config.task, base_model=_base_name(config.model), labels=tuple(str(x) for x in data.labels or ()),
            pipeline_tag=PIPELINE_TAGS.get(trainable.auto_class), train_file=Path(config.train_file).name,
            eval_file=Path(config.eval_file).name if config.eval_file else None,
            hyperparameters={name: getattr(config, name) for name in HYPERPARAMETERS if hasattr(config, name)},
            metrics={k: float(v) for k, v in metrics.items()},
            distribution={name: counts for name, rows in (("train", data.train), ("validation", data.eval))
                          if rows is not None and (counts := trainable.label_counts(rows))},
            multi_label=multi,
        )


def _base_name(model: str) -> str:
    """A Hub id as it is; a local folder by its name only (the card never shows the user's paths)."""
    if not model:
        return ""
    path = Path(model).expanduser()
    return path.name if path.is_absolute() or path.exists() else model


def card_metadata(facts: CardFacts) -> Any:
    """The YAML block: huggingface_hub's ModelCardData (base_model, pipeline_tag, datasets, metrics, labels)."""
    from huggingface_hub import ModelCardData

    tags = ["bertstudio", facts.task] + (["multi-label"] if facts.multi_label else [])
    lora = int(facts.hyperparameters.get("lora_rank") or 0) > 0
    return ModelCardData(
        base_model=facts.base_model or None, pipeline_tag=facts.pipeline_tag, library_name="peft" if lora else
        "transformers", datasets=[facts.train_file], tags=tags,
        metrics=sorted({key.removeprefix("eval_") for key in facts.metrics if key.startswith("eval_")}) or None,
        labels=list(facts.labels) or None,
    )


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    def cell(value: Any) -> str:
        text = f"{value:.4f}" if isinstance(value, float) else str(value)
        return text.replace("|", "\\|").replace("\n", " ")

    return [f"| {' | '.join(header)} |", f"|{'---|' * len(header)}",
            *(f"| {' | '.join(cell(v) for v in row)} |" for row in rows)]


def _metrics_section(facts: CardFacts) -> list[str]:
    splits: dict[str, dict[str, float]] = {}
    for key, value in facts.metrics.items():
        if key.endswith(("_runtime", "_per_second")):
            continue
        split, name = ("validation", key[5:]) if key.startswith("eval_") else ("train", key.removeprefix("train_"))
        splits.setdefault(split, {})[name] = value
    rows = [(split, name, value) for split, values in splits.items() for name, value in values.items()]
    return ["## Metrics", "", *(_table(("split", "metric", "value"), rows) if rows else ["No metrics were computed."])]


def _cross_validation_section(facts: CardFacts) -> list[str]:
    if not facts.cross_validation:
        return []
    folds = facts.cross_validation.get("folds") or []
    mean, sd = facts.cross_validation.get("mean") or {}, facts.cross_validation.get("sd") or {}
    names = sorted(mean) or sorted({k for fold in folds for k in fold})
    rows = [(f"fold {i + 1}", *(fold.get(n, "") for n in names)) for i, fold in enumerate(folds)]
    rows.append(("mean +- sd", *(f"{mean.get(n, float('nan')):.4f} +- {sd.get(n, float('nan')):.4f}" for n in names)))
    return ["## Cross-validated metrics", "", *_table(("", *names), rows), ""]


def _label_issues_section(facts: CardFacts) -> list[str]:
    if facts.label_issues is None:
        return []
    issues = list(facts.label_issues)
    rows = [(i.get("row", ""), i.get("given", ""), i.get("suggested", ""), i.get("self_confidence", ""))
            for i in issues[:SHOWN_ISSUES]]
    more = ["", f"({len(issues) - SHOWN_ISSUES} more not shown.)"] if len(issues) > SHOWN_ISSUES else []
    return ["## Label issues found", "", f"cleanlab flagged {len(issues)} training row(s) whose label looks wrong.",
            "", *(_table(("row", "given", "suggested", "self-confidence"), rows) if rows else []), *more, ""]


def _distribution_section(facts: CardFacts) -> list[str]:
    if not facts.distribution:
        return []
    splits = list(facts.distribution)
    labels = sorted({label for counts in facts.distribution.values() for label in counts})
    rows = [(label, *(facts.distribution[s].get(label, 0) for s in splits)) for label in labels]
    note = ["", "A multi-label row counts once for each of its labels."] if facts.multi_label else []
    return ["## Label distribution", "", *_table(("label", *splits), rows), *note, ""]


def card_text(facts: CardFacts) -> str:
    """The whole README.md."""
    kind = "multi-label " if facts.multi_label else ""
    head = (f"A {kind}{facts.pipeline_tag or facts.task} model fine-tuned with BERT Studio"
            + (f" from `{facts.base_model}`" if facts.base_model else "") + f" on `{facts.train_file}`"
            + (f" (validated on `{facts.eval_file}`)." if facts.eval_file else "."))
    hyper = [(name, f"{value:g}" if isinstance(value, float) else
              value if isinstance(value, str | int) else json.dumps(value))
             for name, value in facts.hyperparameters.items()]
    lines = [
        "---", card_metadata(facts).to_yaml(), "---", CARD_MARK, "", f"# {facts.task}", "", head, "",
        *(["Labels: " + ", ".join(f"`{x}`" for x in facts.labels) + ".", ""] if facts.labels else []),
        "## Training hyperparameters", "", *_table(("setting", "value"), hyper), "",
        *_metrics_section(facts), "", *_cross_validation_section(facts), *_label_issues_section(facts),
        *_distribution_section(facts),
        "## Intended use", "",
        f"Scoring texts like those of `{facts.train_file}`, with the labels above"
        + (" (each independently: a sigmoid probability per label, on at 0.5 unless a threshold is tuned)."
           if facts.multi_label else "."),
        "", "## Limitations", "",
        "The model knows only what its training file shows: texts from other domains, languages or label "
        "definitions may be scored confidently and wrongly. The metrics above come from one validation split "
        "(small splits make them noisy); check it on data of your own before relying on it, and look at the "
        "label distribution: rare labels are learned least well.", "",
    ]
    return "\n".join(lines)


def write_card(folder: Path, facts: CardFacts, replace_foreign: bool = False) -> bool:
    """Write README.md atomically; False (nothing written) where a README.md that is not ours is there.
    `replace_foreign`: the folder is being built by this run (a library's own card may be replaced)."""
    from bertstudio.core.outputs import write_text

    path = Path(folder) / CARD_FILE
    if path.exists() and not replace_foreign and not is_our_card(path):
        return False
    write_text(path, card_text(facts))
    return True


def is_our_card(path: Path) -> bool:
    try:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > 1_000_000:
            return False
        return CARD_MARK in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
