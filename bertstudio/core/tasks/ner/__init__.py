"""NER tagging: entities, wordpieces and strategy comparison, equal to TokenClassificationPipeline.

The pipeline does the numbers. We run its preprocess and forward once and its postprocess per
aggregation strategy, so the entity list, the per-wordpiece view (strategy "none" with no label
ignored) and the side-by-side comparison all come from one model call. What we add: clear
errors (strategies that need word boundaries on a tokenizer without them), and notes for
truncation and generic LABEL_n names (the head warning is added by core.jobs.run_spec).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from typing import Any

from bertstudio.core import engine, execution
from bertstudio.core import notes as _notes
from bertstudio.core.errors import InputError
from bertstudio.core.models import LoadedModel
from bertstudio.core.notes import Note
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.ner.entities import Entity, EntityDiff, compare_entities, entity_type
from bertstudio.core.text_limits import Truncation, require_text

STRATEGIES = ("none", "simple", "first", "average", "max")
WORD_STRATEGIES = frozenset({"first", "average", "max"})  # need the tokenizer's word boundaries
# Whole words, as a person reads entities: 'simple' splits "Merkel" into "Mer" + "kel" whenever the
# wordpieces' tags disagree; 'first' gives each word its first wordpiece's label.
DEFAULT_STRATEGY = "first"
_GENERIC_LABEL = re.compile(r"^LABEL_\d+$")


@dataclass(frozen=True)
class NerInput:
    text: str
    aggregation: str = DEFAULT_STRATEGY
    views: bool = True  # the tab's extra views (wordpieces, every strategy); the CLI skips them


@dataclass(frozen=True)
class NerResult:
    text: str  # what the model read (after any truncation)
    aggregation: str
    entities: tuple[Entity, ...]
    wordpieces: tuple[Entity, ...]  # every wordpiece with its best label and score ("O" included)
    comparison: dict[str, tuple[Entity, ...]]  # strategy -> entities; strategies that cannot run are absent
    unavailable: dict[str, str]  # strategy -> why it cannot run on this tokenizer
    labels: tuple[str, ...]  # id2label in id order
    truncation: Truncation | None = None
    notes: tuple[Note, ...] = ()  # truncation, generic label names, guessed word boundaries

    @property
    def entity_types(self) -> tuple[str, ...]:
        """Types in the model's label order (stable colours), then any others seen."""
        types = list(dict.fromkeys(entity_type(label) for label in self.labels if label != "O"))
        return tuple(types + [t for t in dict.fromkeys(e.entity_type for e in self.entities) if t not in types])

    def to_json(self) -> list[dict[str, object]]:
        grouped = self.aggregation != "none"
        return [e.to_json(grouped) for e in self.entities]


def label_hint(id2label: dict[int, str]) -> str:
    generic = [label for label in id2label.values() if _GENERIC_LABEL.match(label)]
    if not generic:
        return ""
    return (f"This model's labels have generic names ({', '.join(generic[:4])}{'…' if len(generic) > 4 else ''}): "
            "the checkpoint does not say what they mean. Look them up on the model card, or set id2label "
            "in its config.json.")


def has_word_boundaries(tokenizer: Any) -> bool:
    """Fast tokenizers with a continuing-subword prefix ('##') know words; others are guessed from spaces."""
    backend = getattr(tokenizer, "backend_tokenizer", None)  # the Rust tokenizer; slow ones have none
    return bool(tokenizer.is_fast and backend is not None
                and getattr(backend.model, "continuing_subword_prefix", None))


def strategy_problem(tokenizer: Any, strategy: str) -> str:
    """Why `strategy` cannot run with this tokenizer, or "" if it can."""
    if strategy in WORD_STRATEGIES and not tokenizer.is_fast:
        return (f"The '{strategy}' strategy groups wordpieces into words, which needs a fast tokenizer's "
                "offsets; this model's tokenizer is a slow (Python) one. Use 'simple' or 'none'.")
    return ""


def _entities(raw: list[dict[str, Any]]) -> tuple[Entity, ...]:
    return tuple(
        Entity(
            label=str(item.get("entity_group", item.get("entity"))),
            word=str(item["word"]),
            score=float(item["score"]),
            start=None if item.get("start") is None else int(item["start"]),
            end=None if item.get("end") is None else int(item["end"]),
            index=int(item["index"]) if "index" in item else None,
        )
        for item in raw
    )


def tag(loaded: LoadedModel, text: str, aggregation: str = DEFAULT_STRATEGY, views: bool = True) -> NerResult:
    """Entities of `text` with the chosen strategy; with `views`, also the wordpiece view and every
    strategy's entities (the tab's extra views, one forward pass; the CLI skips them)."""
    require_text(text)
    aggregation = (aggregation or "").lower()
    if aggregation not in STRATEGIES:
        raise InputError(f"Unknown aggregation strategy {aggregation!r}.",
                         hint=f"Choose one of {', '.join(STRATEGIES)}.")
    problem = strategy_problem(loaded.tokenizer, aggregation)
    if problem:
        raise InputError(problem)
    info = loaded.info
    if not info.id2label:
        raise InputError("This model's config has no labels (id2label), so its tags cannot be named.",
                         hint="Choose a token-classification checkpoint whose config.json lists id2label.")
    read, truncation, notes = _read(loaded, text)
    comparison, unavailable, wordpieces = _entities_by_strategy(loaded, read, aggregation, views)
    return NerResult(text=read, aggregation=aggregation, entities=comparison[aggregation], wordpieces=wordpieces,
                     comparison=comparison, unavailable=unavailable,
                     labels=tuple(info.id2label[i] for i in sorted(info.id2label)), truncation=truncation,
                     notes=tuple(notes))


def _read(loaded: LoadedModel, text: str) -> tuple[str, Truncation | None, list[Note]]:
    """The text the model reads, what was cut, and the notes a person must see (the cut, generic labels,
    word boundaries guessed from spaces)."""
    tokenizer, info = loaded.tokenizer, loaded.info
    notes: list[Note] = []
    if tokenizer.is_fast:
        read, truncation = execution.fit(loaded, text)
        notes += execution.truncation_notes(truncation)
    else:  # no offsets to cut at: the pipeline truncates, and we say so
        read, truncation = text, None
        if execution.too_long(loaded, [text])[0]:
            notes.append(_notes.warning(f"The text is longer than the {info.max_length} tokens the model reads; "
                                        "the rest was not tagged."))
    hint = label_hint(info.id2label)
    if hint:
        notes.append(_notes.info(hint))
    if not has_word_boundaries(tokenizer) and tokenizer.is_fast:
        notes.append(_notes.info("This tokenizer does not mark where words continue, so 'first', 'average' and "
                                 "'max' guess word boundaries from spaces."))
    return read, truncation, notes


def _entities_by_strategy(loaded: LoadedModel, read: str, aggregation: str, views: bool
                          ) -> tuple[dict[str, tuple[Entity, ...]], dict[str, str], tuple[Entity, ...]]:
    """The pipeline's own steps: one forward, then a postprocess per strategy (every one with `views`, and
    the wordpieces); strategies this tokenizer cannot run are named with why."""
    from transformers.pipelines import AggregationStrategy

    comparison: dict[str, tuple[Entity, ...]] = {}
    unavailable: dict[str, str] = {}
    with engine.exclusive(loaded):
        pipe = loaded.pipeline("token-classification")
        preprocess, _, _ = pipe._sanitize_parameters()
        outputs = [pipe.forward(inputs) for inputs in pipe.preprocess(read, **preprocess)]
        with warnings.catch_warnings():
            # The fallback-heuristic warning is said once, in `notes`.
            warnings.filterwarnings("ignore", message="Tokenizer does not support real words")
            for strategy in STRATEGIES if views else (aggregation,):
                why = strategy_problem(loaded.tokenizer, strategy)
                if why:
                    unavailable[strategy] = why
                    continue
                comparison[strategy] = _entities(
                    pipe.postprocess(outputs, aggregation_strategy=AggregationStrategy[strategy.upper()]))
            wordpieces = _entities(pipe.postprocess(outputs, aggregation_strategy=AggregationStrategy.NONE,
                                                    ignore_labels=[])) if views else ()
    return comparison, unavailable, wordpieces


def compare_results(a: NerResult, b: NerResult) -> EntityDiff:
    return compare_entities(a.entities, b.entities)


def run(loaded: LoadedModel, inputs: NerInput, control: TaskControl) -> NerResult:
    return tag(loaded, inputs.text, inputs.aggregation, inputs.views)


# Trace why's Copy as Python: how its script reads P(target) from the outputs (the clean prediction).
PATCH_READER = (
    "POSITION = int(TARGET.split(':', 1)[0])\n"
    "LABEL = model.config.label2id[TARGET.split(':', 1)[1]]\n"
    '\n'
    '\n'
    'def probability(outputs):\n'
    '    return outputs.logits[0, POSITION].softmax(-1)[LABEL]\n'
)
