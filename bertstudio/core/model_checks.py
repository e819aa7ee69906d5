"""Model sources and the checks made before any weight is read: the folder, its config, the
tokenizer against the embeddings, and the head report (which weights the task's class lacked)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bertstudio.core import adapter_folder
from bertstudio.core.anatomy import checkpoint
from bertstudio.core.anatomy.checkpoint import Judgement, custom_code_reason
from bertstudio.core.anatomy.families import family_of, reads_segments, segments_refusal
from bertstudio.core.errors import MissingHeadError, ModelSourceError
from bertstudio.core.hub import hub_folder, is_hub_id
from bertstudio.core.model_folder import TOKENIZER_HINT, check_fields, check_folder, load_pretrained, read_config
from bertstudio.core.progress import TaskControl
from bertstudio.core.tasks.spec import spec_for


@dataclass(frozen=True)
class HeadReport:
    """Weights the task's model class wanted and the checkpoint did not have (newly initialised)."""

    missing: tuple[str, ...] = ()
    unexpected: tuple[str, ...] = ()
    mismatched: tuple[str, ...] = ()
    unused: tuple[str, ...] = ()  # also newly initialised, but the task never reads them (its spec says so)
    # Every weight is there, but the head was trained for another task (anatomy.checkpoint's judgement,
    # the models list's): what it was saved as and serves, "ModernBertForSequenceClassification (classification)".
    trained_as: str = ""

    @property
    def complete(self) -> bool:
        return not self.missing and not self.mismatched and not self.trained_as

    def warning(self, task: str) -> str:
        if self.complete:
            return ""
        if not self.missing and not self.mismatched:
            return (f"This checkpoint has no trained {task} head: it was saved as {self.trained_as}. Its weights "
                    f"load, but they were never trained for {task}, so the results will be meaningless until "
                    "the head is trained for it.")
        names = ", ".join((self.missing + self.mismatched)[:6])
        more = len(self.missing) + len(self.mismatched) - 6
        return (
            f"This checkpoint has no trained {task} head: {len(self.missing) + len(self.mismatched)} weight "
            f"tensors were newly initialised at random ({names}{f', +{more} more' if more > 0 else ''}). "
            "Results will be meaningless until the head is trained."
        )


def resolve_source(source: str, control: TaskControl | None = None) -> Path:
    """A local model folder for `source`; Hub ids are fetched (or found in the cache offline)."""
    text = (source or "").strip()
    if not text:
        raise ModelSourceError(
            "No model chosen.", hint="Type a Hugging Face Hub id or choose a local model folder."
        )
    path = Path(text).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelSourceError(f"'{text}' is a file, not a model folder.", hint="Choose its folder instead.")
        if not (path / "config.json").exists():  # a FIFO or a huge one is refused by check_folder
            raise ModelSourceError(
                f"'{text}' is not a model folder: it has no config.json.",
                hint="Choose the folder that holds config.json, the weights (model.safetensors) and the tokenizer.",
            )
        return _checked(path.resolve())
    if text.startswith(("/", "./", "../", "~")) or not is_hub_id(text):
        raise ModelSourceError(
            f"'{text}' is neither a folder on this machine nor a Hugging Face Hub id.",
            hint="Check the path, or use an id such as google-bert/bert-base-uncased.",
        )
    return _checked(hub_folder(text, control or TaskControl()))


def _checked(folder: Path) -> Path:
    """Every caller (loading, training) gets a folder our reader passed: config types and bounds,
    no custom code, no FIFOs, weights and tokenizer present; before transformers allocates."""
    _checked_config(folder)
    check_folder(folder)
    return folder


def adapter_base(folder: Path, control: TaskControl | None = None) -> Path:
    """The base model folder a LoRA adapter names (resolved offline like any source); a missing one is named."""
    base = adapter_folder.base_name(folder)
    try:
        return resolve_source(base, control)
    except ModelSourceError as error:
        raise ModelSourceError(f"The adapter in '{folder}' was trained on the base model '{base}', which cannot "
                               f"be loaded: {error.message}",
                               hint="Put that base model where the adapter says (or download it once), or edit "
                                    "base_model_name_or_path in adapter_config.json.") from None


def adapter_tasks(folder: Path) -> tuple[str, ...]:
    """The task specs whose model class is the adapter's head class (the base must be on this machine),
    from head_config.json, else the base's config.json: no transformers imported (the models list)."""
    base = adapter_base(folder)
    path = folder / adapter_folder.HEAD_CONFIG
    if not path.exists():
        return checkpoint.saved_class_tasks(read_config(base))
    config = adapter_folder.read_json(path, "head config")
    check_fields(config, folder)
    reason = custom_code_reason(config)
    if reason:
        raise ModelSourceError(f"The {adapter_folder.HEAD_CONFIG} in '{folder}' {reason}.")
    return checkpoint.saved_class_tasks(config)


def quiet_transformers() -> None:
    """Our head report replaces transformers' LOAD REPORT table and progress bars."""
    import transformers

    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def model_class(task: str) -> Any:
    import transformers

    return getattr(transformers, spec_for(task).model_class)


def head_class(task: str, config: Any) -> Any:
    """transformers' class for `task` on this config's architecture, or None where it has none."""
    return model_class(task)._model_mapping.get(type(config), None)


def check_task_supported(task: str, config: Any) -> None:
    if head_class(task, config) is None:
        family = family_of(config)
        name = family.name if family else config.model_type
        wanted = type(config).__name__.removesuffix("Config") + spec_for(task).model_class.removeprefix("AutoModel")
        raise MissingHeadError(
            f"A {name} model cannot do {task}: transformers has no {task} head for {name} (no {wanted} class).",
            hint="Choose a model of another architecture for this task (for example BERT).",
        )


def _checked_config(folder: Path) -> dict[str, Any]:
    """config.json through our reader (types, bounds), refused if it needs custom code."""
    config = read_config(folder)
    reason = custom_code_reason(config)
    if reason:
        raise ModelSourceError(
            f"The model in '{folder}' {reason}.",
            hint="Choose a model of a standard architecture (BERT, DistilBERT, RoBERTa, ALBERT, ELECTRA).",
        )
    return config


def checkpoint_config(folder: Path) -> Any:
    """transformers' config, after our reader checked types, sizes and custom code (never run)."""
    from transformers import AutoConfig

    _checked_config(folder)
    return load_pretrained(AutoConfig, folder, f"The config.json in '{folder}' cannot be read as a transformers model.",
                           hint="Check that the folder holds a BERT-family model saved with save_pretrained.")


def _check_tokenizer(tokenizer: Any, folder: Path) -> None:
    """An empty vocabulary (only special tokens) makes every word [UNK]: refuse it, never compute on it."""
    if len(tokenizer) <= len(set(tokenizer.all_special_tokens)) + 1:
        raise ModelSourceError(
            f"The tokenizer in '{folder}' has no vocabulary ({len(tokenizer)} tokens, all special): every "
            "word would become [UNK] and the results would be meaningless.", hint=TOKENIZER_HINT)


def _check_vocabulary(tokenizer: Any, config: Any, folder: Path) -> None:
    """Every id the tokenizer gives must have a row in the model's embeddings, or the forward pass fails
    with an IndexError: token ids (config vocab_size) and segment ids (type_vocab_size: a model with
    one segment row gets no segment ids, so a sentence pair reads as one segment). Before the weights."""
    rows = getattr(config, "vocab_size", None)
    ids = len(tokenizer)  # the vocabulary and the added tokens: ids 0 .. len - 1
    if isinstance(rows, int) and ids > rows:
        raise ModelSourceError(
            f"The tokenizer in '{folder}' has {ids:,} tokens but the model's embedding has only {rows:,} rows "
            f"(config.json vocab_size = {rows:,}): token ids {rows:,} and above have no embedding.",
            hint="The tokenizer files belong to another model: copy those of the model the checkpoint was "
                 "trained from, or fix vocab_size.")
    refusal = segments_refusal(config)
    if refusal:
        raise ModelSourceError(f"The model in '{folder}' {refusal}.",
                               hint="Fix type_vocab_size or choose another model folder.")
    if not reads_segments(config):  # one row or none (DeBERTa-v3): read a pair as one segment, as RoBERTa does
        tokenizer.model_input_names = [name for name in tokenizer.model_input_names if name != "token_type_ids"]


def judge_heads(folder: Path) -> Judgement:
    """Which tasks the folder's weights were trained for: the models list's judgement (config.json and the
    safetensors header; a broken header is a ModelSourceError naming the file, before transformers reads it)."""
    return checkpoint.judge_folder(folder, read_config(folder))


def head_report(info: dict[str, Any], task: str, config: Any, judged: Judgement | None = None) -> HeadReport:
    """The weights the task's class lacked (transformers' loading info); then, all there, whether the head
    was trained for `task`: the folder's judgement (`judged`), else (a LoRA adapter) the saved class's name."""
    spec = spec_for(task)
    mismatched = tuple(sorted(str(k[0] if isinstance(k, tuple) else k) for k in info.get("mismatched_keys", ())))
    missing = tuple(sorted(str(k) for k in info.get("missing_keys", ())))
    unused = tuple(k for k in missing if spec.ignore_missing and k.startswith(spec.ignore_missing))
    report = HeadReport(
        missing=tuple(k for k in missing if k not in unused),
        unexpected=tuple(sorted(info.get("unexpected_keys", ()))),
        mismatched=mismatched,
        unused=unused,
    )
    if not report.complete:
        return report
    if judged is not None:
        return report if judged.serves(task) else replace(report, trained_as=judged.trained_as())
    suffix = spec.trained_as
    trained_as = getattr(config, "architectures", None) or []
    if suffix and trained_as and not any(a.endswith(suffix) for a in trained_as):
        # BERT's sequence, token and choice heads are all called `classifier`: trust the saved class.
        return replace(report, trained_as=", ".join(trained_as))
    return report


def probe_heads(folder: Path, task: str) -> HeadReport:
    """The head report for `task` without reading tensor data (weights placed on the meta device)."""
    quiet_transformers()
    config = checkpoint_config(folder)  # checked and bounded first: the meta model stays small to build
    check_task_supported(task, config)
    judged = judge_heads(folder)
    try:
        _, info = model_class(task).from_pretrained(
            folder, output_loading_info=True, device_map="meta", trust_remote_code=False
        )
    except (RuntimeError, ValueError) as error:  # a head of the wrong shape (27 labels where 1 is wanted)
        raise head_refused(str(folder), task, judged, error) from error
    return head_report(info, task, config, judged)


def head_refused(source: str, task: str, judged: Judgement | None, error: BaseException) -> MissingHeadError:
    """transformers would not build `task`'s class on this checkpoint (DistilBERT's QA head wants 2 labels,
    a 5-label NER checkpoint has 5): said with what the head was trained as, the one reason of the many."""
    saved = f" It was saved as {judged.trained_as()}." if judged is not None and not judged.serves(task) else ""
    first = (str(error).strip().splitlines() or [type(error).__name__])[0][:200]
    return MissingHeadError(f"The head in '{source}' does not fit {task} ({first}).{saved}",
                            hint="Choose a checkpoint trained for this task.", details=str(error))


def tokenizer_for(where: Path, folder: Path, config: Any) -> Any:
    """The tokenizer in `where`, checked against the model in `folder` (its vocabulary fits the embeddings)."""
    from transformers import AutoTokenizer

    tokenizer = load_pretrained(AutoTokenizer, where, f"The tokenizer in '{folder}' cannot be loaded.",
                                hint="The folder needs tokenizer files (tokenizer.json, or vocab.txt / vocab.json "
                                     "+ merges.txt).")
    _check_tokenizer(tokenizer, folder)
    _check_vocabulary(tokenizer, config, folder)
    return tokenizer
