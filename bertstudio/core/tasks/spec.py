"""Task specs: the one place that says what a capability is.

A spec is the single source of a task's key, model class, head check, default model,
attention implementation, how to run it on a loaded model and how to compare two results.
`core/models.py`, the tabs, the CLI and the catalog read specs; no task key is written
twice (transformers' task registry in `pipelines/__init__.py` plays this role there).

A task is a package, core/tasks/<task>/: its run code in __init__.py, and beside it what the task
knows for every capability (explain.py, evaluate.py, whatif.py, suite.py, train.py, snippet.py). Its
spec.py defines `SPEC = TaskSpec(...)`, importing each function and trainable it names; `all_specs()`
finds them.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from bertstudio.core.errors import InputError
from bertstudio.core.notes import Note

if TYPE_CHECKING:
    from bertstudio.core.progress import TaskControl

# The spec's contract, typed. `loaded` is a core.models.LoadedModel and a task's inputs and results
# are its own dataclasses: they are Any here because models.py reads the specs (naming it back made a
# circle) and every task's shapes differ. The arity and the plain values are exact.
Loaded = Any  # core.models.LoadedModel
TaskInputs = Any  # the task's input dataclass (ClassificationInput, QAInput...)
TaskResult = Any  # what `run` returns: it has `notes` and `to_json()`
# run(loaded, inputs, control) -> result.
RunFunction = Callable[[Loaded, TaskInputs, "TaskControl"], TaskResult]
# (model source, inputs) -> a runnable transformers script (Copy as Python, `--python`).
ScriptBuilder = Callable[[str, TaskInputs], str]
# Explain (core/explain): texts <-> the task's input, its target, F = P(target) (explain.targets.Prepared).
TextsOf = Callable[[TaskInputs], tuple[str, ...]]
InputsOf = Callable[[tuple[str, ...]], TaskInputs]
PrepareExplain = Callable[[Loaded, tuple[str, ...], str | None], Any]  # -> explain.targets.Prepared
Summary = Callable[[TaskResult], str]
ExamplesReader = Callable[[Path], list[Any]]  # a data file -> [explain.importance.Example]
TargetOf = Callable[[TaskResult], str | None]


class LayerReader(Protocol):
    """(loaded, text, top_k[, lens]) -> the task's predictions read at every layer (fill-mask's logit lens:
    tasks/fill_mask/layers.LayerPredictions; `lens`: a features.tuned_lens.TunedLens read beside it)."""

    def __call__(self, loaded: Loaded, text: str, top_k: int = ..., lens: Any = ...) -> Any: ...


# Evaluate (core/evaluate): rows are evaluate.readers.Example, files evaluate.readers.Dataset.
Row = Any  # evaluate.readers.Example
Reader = Callable[[Path, Any, "TaskControl | None"], Any]  # (path, EvalColumns, control) -> Dataset
# (loaded, rows, control, EvalOptions, **what `prepare` returned) -> (evaluate.predict.Prediction per row, notes)
Predictor = Callable[..., tuple[list[Any], list[Any]]]
# (golds, predicted values, labels) -> (metrics, per label, confusion or None): evaluate.metrics.Scores
Metrics = Callable[[Sequence[Any], Sequence[Any], Sequence[str]], tuple[dict[str, float], dict[str, Any], Any]]
# (loaded, dataset) -> (labels for metrics, notes, keywords for the predictor): evaluate.predict.Checked
CheckDataset = Callable[[Loaded, Any], tuple[list[str], list[str], dict[str, Any]]]
RowInputs = Callable[[Row], TaskInputs]
RowPair = Callable[[Row], tuple[str, str | None]]
# The pipeline contract (transformers' preprocess -> _forward -> postprocess): rows of texts (as
# ExplainAdapter.texts_of gives them) -> engine.Encoded; the model's logits -> scores per row.
EncodeRows = Callable[[Loaded, Sequence[tuple[str, ...]], "TaskControl | None"], Any]  # -> engine.Encoded
ReadOutputs = Callable[[Loaded, Any], Any]  # (loaded, logits: torch or numpy, rows first) -> the same kind, scores
# What would flip this (core/whatif): (loaded, result) -> whatif.tasks.Prediction; (loaded, model inputs,
# model outputs) -> a (batch, classes) tensor of probabilities.
Predicted = Callable[[Loaded, TaskResult], Any]
Probabilities = Callable[[Loaded, Any, Any], Any]
ChoiceLogits = Callable[[Loaded, list[tuple[str, ...]], Any], Any]  # (loaded, edited inputs, control) -> logits
# Train (core/training): a training.base.TrainableTask. Any here for the reason `Loaded` is: its
# registry (training/trainable.py) reads the specs, so naming it back would close a circle.
Trainable = Any


@dataclass(frozen=True)
class TaskPipeline:
    """A task's preprocess and postprocess, in the shape of transformers' pipelines: running it is
    `read(forward(encode(rows)))`, the forward being core/engine.py's batches (tasks/pipeline.py).
    Its run, Explain's F, Evaluate's predictor and counterfactual scoring all read with `read`, so
    logits become scores in one place per task."""

    encode: EncodeRows  # (loaded, rows of texts, control) -> engine.Encoded (tokenized once, unpadded)
    read: ReadOutputs  # (loaded, logits) -> scores per row and class (softmax, sigmoid or the value)


@dataclass(frozen=True)
class ExplainAdapter:
    """How Explain reads this task (core/tasks/<task>/explain.py): its texts, the target, and F = P(target)."""

    refused: ClassVar[str] = "{task} cannot be explained."
    parts: str  # what a person types, one part per line: "the question, then the context"
    texts_of: TextsOf  # the task's input -> the texts explained
    inputs_of: InputsOf  # texts -> the task's input (to run the task itself)
    prepare: PrepareExplain  # (loaded, texts, target or None) -> explain.targets.Prepared
    one_text: bool = False  # typed lines are joined into one text (not one part per line)
    per_layer: LayerReader | None = None  # the MLM head read at every layer too (Explain's Layers page, --per-layer)
    summary: Summary | None = None  # a result in a few lines (head pruning: intact vs pruned)
    examples: ExamplesReader | None = None  # a data file -> [importance.Example] (default: tab-separated)
    target_of: TargetOf | None = None  # the task's result -> the --target it explains (its answer)

    @classmethod
    def of(cls, steps: ModuleType, parts: str, **options: Any) -> ExplainAdapter:
        """The adapter of a task's explain.py, whose functions are named as the fields are."""
        return cls(parts, steps.texts_of, steps.inputs_of, steps.prepare, summary=steps.summary,
                   target_of=steps.target_of, **options)


@dataclass(frozen=True)
class EvaluateAdapter:
    """How Evaluate scores this task on a labelled file (core/tasks/<task>/evaluate.py): the functions
    take the rows its reader gives (`evaluate.readers.Example`, task-shaped)."""

    refused: ClassVar[str] = "Evaluation does not support the task '{task}'."
    picker: str  # the Evaluate tab's task picker: "Classification (CSV/TSV/JSONL)"
    file_filter: str  # its Open dialog: "Tables (*.csv *.tsv *.jsonl)"
    read: Reader  # (path, EvalColumns, control) -> evaluate.readers.Dataset
    predict: Predictor  # (loaded, examples, control, options, **prepared) -> (predictions, notes)
    metrics: Metrics  # (golds, predicted values, labels) -> (metrics, per label, confusion or None)
    inputs_of: RowInputs  # a row -> the task's input (the row opened in the task's tab)
    pair_of: RowPair  # a row -> the text (pair) the projector embeds
    columns: tuple[tuple[str, str], ...] = ()  # (EvalColumns field, label) a person may choose
    choice_columns: bool = False  # a list of choice columns may be named too
    # (loaded, dataset) -> (labels, notes, keywords for `predict`): refuses a file the model cannot
    # score (a label or tag it does not know) before any row runs; None: nothing to check.
    prepare: CheckDataset | None = None
    labels: tuple[str, ...] = ()  # a fixed label order for metrics (NSP's IsNext, NotNext)
    correct: Callable[[Any, Any], bool] | None = None  # (gold, predicted value); None: equal
    shown_gold: Callable[[Row, Any], str] | None = None  # (row, prediction) -> the Rows page's gold; None: str
    # One label per row (a class, IsNext, a choice): slices by it score accuracy, the projector colours by it.
    labelled: bool = False
    label_of: Callable[[Row], str | None] | None = None  # the slice label of an unlabelled task's row
    row_accuracy: bool = True  # a row is right or wrong (the masked LM scores tokens, not rows)
    per_label: str = "class"  # per-label scores are "per class" or "per type" (entities)
    error_order: Callable[[Any], float] | None = None  # predicted value -> sort key of the errors; None: row order

    @classmethod
    def of(cls, steps: ModuleType, picker: str, file_filter: str, **options: Any) -> EvaluateAdapter:
        """The adapter of a task's evaluate.py: its read_file, predict and inputs_of, and `options`."""
        return cls(picker, file_filter, **{"read": steps.read_file, "predict": steps.predict,
                                           "inputs_of": steps.inputs_of, **options})


@dataclass(frozen=True)
class CounterfactualAdapter:
    """What would flip this task's prediction (core/whatif; core/tasks/<task>/whatif.py): how a search
    reads the prediction from `run`'s result and the probabilities of a batch of edited inputs. The
    texts are the Explain adapter's (`texts_of`/`inputs_of`); only the texts numbered in `edits` are edited."""

    predicted: Predicted  # (loaded, result of `run`) -> whatif.tasks.Prediction (class index, label, score)
    probabilities: Probabilities  # (loaded, model inputs, model outputs) -> (batch, classes) probabilities
    edits: tuple[int, ...] = (0,)  # which texts a search may edit (0: the text or prompt, 1: the pair)
    # Texts that are a prompt and endings (one sequence per ending): the task's (inputs, endings) logits of
    # a batch of edited inputs, each (prompt, ending) a row of the engine. None: one sequence per input.
    choice_logits: ChoiceLogits | None = None
    masked_lm: bool = False  # the task's own model is a masked LM: it proposes words; `--mlm` loads for this task

    @property
    def choices(self) -> bool:
        return self.choice_logits is not None

    @classmethod
    def of(cls, steps: ModuleType, **options: Any) -> CounterfactualAdapter:
        """The adapter of a task's whatif.py: its `predicted` and `probabilities`."""
        return cls(steps.predicted, steps.probabilities, **options)


# Suites (core/suites): a case is a tuple of strings, one per part; a training row made of a failing
# case is (its parts, the answer training learns: tags, (answer, start), a choice number).
Case = tuple[str, ...]
FixRow = tuple[Case, Any]


@dataclass(frozen=True)
class SuiteFix:
    """How a task's failing cases become rows in its own training format ("Fine-tune on failures",
    `check --failures`; core/suites/fix_tasks.py calls these, core/tasks/<task>/suite.py defines them).
    A task whose failures are labelled table rows (classification, NSP: core/suites/fix.py) has none."""

    suffix: str  # the new file's ending: ".conll", ".json", ".csv"
    row: Callable[[Case, Any], FixRow | None]  # (parts, answer) -> the row training reads; None: no honest label
    write: Callable[[Path, Sequence[FixRow]], None]  # the rows alone, in the format, to a path
    # (data, new file, rows): the user's data as training reads it, then the rows, into the new file
    extend: Callable[[Path, Path, Sequence[FixRow]], None]


@dataclass(frozen=True)
class SuiteAdapter:
    """How behavioural test suites (core/suites) read this task (core/tasks/<task>/suite.py). `inputs`
    makes a case the Evaluate reader's `Example.inputs`, so the task's Evaluate predictor scores it."""

    refused: ClassVar[str] = "Suites do not test the task '{task}'."
    parts: tuple[str, ...]  # names of a case's parts ("question", "context"): messages and a test's "on"
    inputs: Callable[[Case], Any]  # a case -> Example.inputs
    min_parts: int = 1
    max_parts: int | None = None  # None: any number (choices)
    # MFT's `expect` checked: (value) -> what is wrong with it, "" when nothing. None: one of the model's
    # labels (a non-empty string); then the task is `labelled`.
    expected: Callable[[Any], str] | None = None
    # MFT's `expect` checked against one case: (case, expect) -> what is wrong ("" when nothing), e.g. a
    # choice number past the case's choices. None: nothing to check per case.
    expected_in: Callable[[Case, Any], str] | None = None
    # An input item read the task's own way -> its parts (None: not an input). None: a text, a list of
    # texts or an object by part names (multiple choice reads [prompt, [choices]] and no object).
    read_item: Callable[[Any], list[Any] | None] | None = None
    same: Callable[[Any, Any], bool] | None = None  # two predicted values agree (INV); None: equal
    meets: Callable[[Any, str, Any], bool] | None = None  # (value, shown, expect): MFT passes; None: equal text
    labels: Callable[[Any], tuple[str, ...]] | None = None  # loaded model -> its labels; None: id2label's
    gold: Any = None  # what Example.gold holds (QA: an answer exists, so "no answer" may not win)
    fix: SuiteFix | None = None  # failures as rows in the task's own training format; None: labelled rows or none

    @property
    def labelled(self) -> bool:
        """MFT expects one of the model's labels: DIR may read a label's probability, and failures are
        labelled table rows (core/suites/fix.py)."""
        return self.expected is None


@dataclass(frozen=True)
class Part:
    """One part of a task's input as a command line names it (`TaskSpec.parts`). The task's own command
    and explain, counterfactual, patch and head-importance add and read the same parts (cli/_inputs.py)."""

    dest: str  # the argparse name: "text", "question", "sentences_b"
    help: str
    flag: str = ""  # "--question": given by name; "": positional
    metavar: str | None = None
    many: bool = False  # one or more: nargs="+", a flag given again (--choice E --choice E)
    required: bool = True
    file: str = ""  # "--context-file": the part may be read from a UTF-8 text file instead


def sentence_parts(first: str, more: str) -> tuple[Part, Part]:
    """Sentence A and one or more sentences B, both positional."""
    return Part("sentence_a", first, metavar="A"), Part("sentences_b", more, metavar="B", many=True)


@dataclass(frozen=True)
class TaskSpec:
    key: str  # LoadRequest.task, settings keys: "fill-mask", "classification"...
    title: str  # what a person reads: tab title, messages
    model_class: str  # the transformers Auto class that carries the task's head
    default_model: str  # what an online user gets without choosing
    command: str = ""  # CLI subcommand when it differs from `key` ("classify")
    # The saved class-name ending that proves a shared `classifier` head was trained for this task
    # (BERT's sequence, token and choice heads all have that name).
    trained_as: str = ""
    # Weight-name prefixes (as the model class names them) the task never uses: missing, they are not
    # reported as an untrained head (Attention reads the encoder only, so a masked-LM checkpoint's
    # absent pooler is no reason to warn).
    ignore_missing: tuple[str, ...] = ()
    attn_implementation: str | None = None  # "eager" where attention weights are shown
    run: RunFunction | None = None  # None: a model class only (pre-training is driven by training/)
    compare: Callable[[Any, Any], Any] | None = None  # (result A, result B) -> differences (to_json-able)
    # The inputs rewritten for another model (its own mask token): used for model B when comparing.
    inputs_for: Callable[[Any, Any], Any] | None = None  # (LoadedModel, inputs) -> inputs
    order: int = 100  # tabs and listings, smaller first
    # A masked LM's (word, probability) at a text's first mask, best first: suites fill a template's
    # {mask} with it (core/suites/masks.py), loading the masked LM as this task.
    mask_words: Callable[[Loaded, str, int], list[tuple[str, float]]] | None = None
    # Optional adapters: what the task offers beyond Run. A tab offers Explain…, Copy as Python or
    # Evaluate only where its spec has the adapter; the Explain and Evaluate tabs, the snippet
    # writer and the CLI list exactly the specs that have one.
    pipeline: TaskPipeline | None = None  # encode / read: the task's numbers, written once
    explain: ExplainAdapter | None = None
    evaluate: EvaluateAdapter | None = None
    script: ScriptBuilder | None = None
    counterfactual: CounterfactualAdapter | None = None  # What would flip this? (core/whatif)
    suite: SuiteAdapter | None = None  # behavioural test suites (core/suites)
    # The Train tasks that fine-tune this task's head (core/tasks/<task>/train.py), the first one named
    # as the task (its key or CLI name); training/trainable.py collects every spec's into TRAINABLE.
    trainables: tuple[Trainable, ...] = ()
    # Trace why's Copy as Python (core/patching/snippet.py): the script lines that define
    # `probability(outputs)`, P(target) as Explain reads it; "" where no script is written.
    patch_reader: str = ""
    # (config, source) -> None, raising MissingHeadError where the checkpoint's head cannot serve the task
    # (QA's span head needs 2 labels): core/models.py asks it once the model is built, before anything runs it.
    check_config: Callable[[Any, str], None] | None = None
    # Its Evaluate predictor and single-input run read only the model's outputs, so an exported .onnx
    # runs it on ONNX Runtime (core/export/onnx_runtime.py; --runtime onnx, the device picker).
    onnx_runtime: bool = False
    parts: tuple[Part, ...] = ()  # its input on a command line, in order (cli/_inputs.py)

    @property
    def cli_name(self) -> str:
        return self.command or self.key


def result_notes(result: Any) -> tuple[Note, ...]:
    """The notes a result carries (every task result has a `notes` tuple of Note)."""
    return tuple(getattr(result, "notes", ()) or ())


@cache
def all_specs() -> dict[str, TaskSpec]:
    """Every spec under bertstudio.core.tasks (each task package's `spec` module), keyed by task key, in `order`."""
    found: list[TaskSpec] = []
    folder = Path(__file__).parent
    for module in pkgutil.iter_modules([str(folder)]):
        if not module.ispkg or not _defines_spec(folder / module.name / "spec.py"):
            continue  # a helper module, or a package without a spec
        name = f"{__package__}.{module.name}.spec"
        try:
            namespace = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue  # no spec module: a helper package
        spec = getattr(namespace, "SPEC", None)
        if isinstance(spec, TaskSpec):
            found.append(spec)
    return {spec.key: spec for spec in sorted(found, key=lambda s: (s.order, s.key))}


def _defines_spec(path: Path) -> bool:
    """Whether a task package's spec module assigns `SPEC` at its top level (read, not imported: a
    package without one is not a task). No source beside it (a frozen build): import it and look."""
    try:
        return re.search(r"^SPEC\b", path.read_text(encoding="utf-8"), re.MULTILINE) is not None
    except OSError:
        return True


def spec_for(key: str) -> TaskSpec:
    specs = all_specs()
    if key not in specs:
        raise ValueError(f"unknown task {key!r} (known: {', '.join(specs)})")
    return specs[key]


def spec_for_command(command: str) -> TaskSpec:
    """The spec behind a CLI name ("classify") or a key ("classification")."""
    for spec in all_specs().values():
        if command in (spec.key, spec.cli_name):
            return spec
    raise ValueError(f"unknown task {command!r}")


Adapter = TypeVar("Adapter", ExplainAdapter, EvaluateAdapter, SuiteAdapter)


def specs_with(kind: type) -> dict[str, TaskSpec]:
    """The specs holding an adapter of this kind (ExplainAdapter, EvaluateAdapter...), by key, in their
    order: what each capability lists (its tab's picker, its command's --task choices)."""
    return {key: spec for key, spec in all_specs().items() if _held(spec, kind) is not None}


def adapter_for(task: str, kind: type[Adapter]) -> Adapter:
    """The adapter of this kind on the spec of `task` (a key), the one lookup of every capability: where
    there is none, InputError (the kind's `refused`) naming the tasks that have one."""
    spec = all_specs().get(task)
    found = _held(spec, kind) if spec is not None else None
    if found is None:
        names = [spec.cli_name for spec in specs_with(kind).values()]
        choose = f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else "".join(names)
        raise InputError(kind.refused.format(task=task), hint=f"Choose {choose}.")
    return found


def _held(spec: TaskSpec, kind: type[Any]) -> Any:
    return next((value for value in vars(spec).values() if isinstance(value, kind)), None)


def jsonable(value: Any) -> Any:
    """Results, differences and notes as plain JSON values (objects that know their JSON form say so)."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    return value
