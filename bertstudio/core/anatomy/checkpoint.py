"""What a checkpoint's head was trained for, from config.json and the safetensors header alone.

No torch, no transformers, no tensor data: the models list judges a hundred folders in the time
transformers takes to import, and loading a model for a task warns with the same judgement, so the
list and the warning never disagree.

The saved class (config.json's `architectures`) says what a head was trained as; the tensors confirm
that the head is there, of the right shape (labels counted as transformers counts them). Both are
needed: ModernBERT's question-answering head and its 2-label sequence classifier have the same
tensors (`head.*`, `classifier.*` of 2 rows), and a BERT token classifier and a sequence classifier
differ only by the pooler. Heads with a name of their own (a masked-LM head, BERT's next-sentence
head, `qa_outputs`) count from their tensors even where the saved class does not name them:
bert-base-uncased was saved as BertForMaskedLM with its next-sentence head trained beside it.

A head is named by the suffix of the class that carries it, as transformers' Auto classes name
them ("ForMaskedLM", "ForSequenceClassification"...; "Model" for the bare encoder); a task spec's
`model_class` (AutoModelForX) says which one it needs.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bertstudio.core.anatomy.families import FAMILIES, Family
from bertstudio.core.anatomy.known_types import HEAD_TABLE, MODEL_TYPES
from bertstudio.core.errors import BertStudioError, ModelSourceError

SAFETENSORS = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"
MAX_HEADER_BYTES = 100_000_000  # safetensors' own bound on a header (a real one is well under 10 MB)
MAX_INDEX_BYTES = 16 * 1024 * 1024
MAX_SHARDS = 1_000
MAX_DIMENSION = 1 << 40

BARE = "Model"  # the bare encoder: AutoModel
MASKED_LM, PRETRAINING, NEXT_SENTENCE = "ForMaskedLM", "ForPreTraining", "ForNextSentencePrediction"
SEQUENCE, TOKEN, QA, CHOICE = ("ForSequenceClassification", "ForTokenClassification", "ForQuestionAnswering",
                               "ForMultipleChoice")
SUFFIXES = (BARE, MASKED_LM, PRETRAINING, NEXT_SENTENCE, SEQUENCE, TOKEN, QA, CHOICE)


def _head_classes(table: str) -> dict[str, dict[str, str]]:
    """known_types.HEAD_TABLE read: family -> Auto class suffix -> the class transformers builds for it."""
    found = {}
    for model_type, prefix, *changes in (row.split() for row in table.strip().splitlines()):
        heads = {suffix: suffix for suffix in SUFFIXES if suffix != NEXT_SENTENCE}
        for change in changes:
            suffix, _, built = change.lstrip("+-").partition("=")
            if change.startswith("-"):
                del heads[suffix]
            else:
                heads[suffix] = built or suffix
        found[model_type] = {suffix: prefix + built for suffix, built in heads.items()}
    return found


HEAD_CLASSES = _head_classes(HEAD_TABLE)  # .get(model_type) is None for a type outside our families

# The module names of heads, from the task model (a tensor `classifier.weight` is the classifier's):
CLASSIFIER = "classifier"  # sequence, token and choice heads of every family (and ModernBERT's QA head)
QA_OUTPUTS = "qa_outputs"  # a span head: (2, hidden), start and end (BigBird nests it in qa_classifier)
NEXT_SENTENCE_HEAD = "cls.seq_relationship"  # BERT's next-sentence head: (2, hidden)
# model_type -> what its ForPreTraining class holds, where that is not the masked-LM class itself:
# whether a masked-LM head, and the modules of its other heads
PRETRAINING_HEADS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "bert": (True, (NEXT_SENTENCE_HEAD,)),
    "big_bird": (True, (NEXT_SENTENCE_HEAD,)),
    "albert": (True, ("sop_classifier",)),  # sentence-order prediction
    "electra": (False, ("discriminator_predictions",)),  # replaced-token detection, no masked LM
}


def masked_lm_modules(family: Family) -> tuple[str, ...]:
    """The module of each masked-LM alternative that projects to the vocabulary (its last one:
    `cls.predictions`, `lm_head`, `vocab_projector`, ModernBERT's `decoder`...)."""
    return tuple(dict.fromkeys(path[-1].removesuffix("+embeddings") for path in family.masked_lm if path))


ANY_MASKED_LM = tuple(dict.fromkeys(name for family in FAMILIES.values() for name in masked_lm_modules(family)))


def custom_code_reason(config: Mapping[str, object]) -> str:
    """Why a checkpoint is out of reach without running its own Python code; "" if it is not."""
    model_type = str(config.get("model_type") or "")
    if config.get("auto_map"):
        stock = f"; the stock {model_type} class would compute something else" if model_type in MODEL_TYPES else ""
        return (f"needs custom code (auto_map in config.json{f', model type {model_type}' if model_type else ''}), "
                f"which BERT Studio never runs{stock}")
    if model_type not in MODEL_TYPES:
        known = f"model type '{model_type}' is unknown to transformers" if model_type else "no model_type"
        return f"needs custom code ({known}), which BERT Studio never runs"
    return ""


# -- the weights: tensor names and shapes from the safetensors header -------------------------------

Shapes = Mapping[str, tuple[int, ...]]


def _broken(path: Path, problem: str) -> ModelSourceError:
    return ModelSourceError(f"The weights file '{path}' {problem}.",
                            hint="Copy the checkpoint again (a download or copy was cut short), or save it "
                                 "again with save_pretrained.")


def read_header(path: Path) -> dict[str, tuple[int, ...]]:
    """A safetensors file's tensor names and shapes: the 8-byte little-endian header length, bounded
    by the file's size and MAX_HEADER_BYTES before anything is read, then the JSON header, checked."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise _broken(path, "is not a regular file (a pipe, device or socket)")
        with path.open("rb") as stream:
            prefix = stream.read(8)
            if len(prefix) < 8:
                raise _broken(path, f"is {info.st_size} bytes long: too short for a safetensors header")
            length = int.from_bytes(prefix, "little")
            if length > info.st_size - 8:
                raise _broken(path, f"is truncated: its header says {length:,} bytes, but only "
                                    f"{info.st_size - 8:,} follow")
            if length > MAX_HEADER_BYTES:
                raise _broken(path, f"has a header of {length:,} bytes; at most {MAX_HEADER_BYTES:,} are read")
            raw = stream.read(length)
    except OSError as error:
        raise ModelSourceError(f"The weights file '{path}' cannot be read: {error.strerror or error}.") from None
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _broken(path, "has a header that is not JSON (it is not a safetensors file, or it is damaged)") from None
    if not isinstance(header, dict):
        raise _broken(path, "has a header that is not a JSON object")
    return _shapes(path, header, info.st_size - 8 - length)


def _shapes(path: Path, header: dict[str, Any], data_bytes: int) -> dict[str, tuple[int, ...]]:
    shapes = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        shape = entry.get("shape") if isinstance(entry, dict) else None
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if not (isinstance(shape, list) and all(_count(n) for n in shape) and isinstance(offsets, list)
                and len(offsets) == 2 and all(_count(n) for n in offsets) and offsets[0] <= offsets[1]):
            raise _broken(path, f"has a malformed header entry for tensor '{str(name)[:80]}'")
        if offsets[1] > data_bytes:
            raise _broken(path, f"is truncated: tensor '{str(name)[:80]}' ends at byte {offsets[1]:,} of its data, "
                                f"but the file holds {data_bytes:,}")
        shapes[str(name)] = tuple(shape)
    return shapes


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_DIMENSION


def _shard_names(folder: Path) -> list[str]:
    """The shard files a model.safetensors.index.json names (plain names inside the folder)."""
    from bertstudio.core.files import read_text

    index = folder / SAFETENSORS_INDEX
    try:
        data = json.loads(read_text(index, "safetensors index", MAX_INDEX_BYTES))
    except BertStudioError as error:
        raise ModelSourceError(error.message, hint=error.hint) from None
    except (ValueError, RecursionError):
        raise _broken(index, "is not valid JSON") from None
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise _broken(index, "has no weight_map of tensor names to shard files")
    shards = sorted(set(weight_map.values()))
    if len(shards) > MAX_SHARDS:
        raise _broken(index, f"names {len(shards):,} shards; at most {MAX_SHARDS:,} are read")
    for name in shards:
        if Path(name).name != name or name.startswith(".") or not name.endswith(".safetensors"):
            raise _broken(index, f"names a shard '{name[:80]}' that is not a .safetensors file in its folder")
    return shards


def read_shapes(folder: Path) -> dict[str, tuple[int, ...]] | None:
    """Every tensor's name and shape in a folder's safetensors weights (one file, or the shards an index
    names); None where there are none (a pytorch_model.bin is never unpickled to list its tensors)."""
    if (folder / SAFETENSORS).exists():
        return read_header(folder / SAFETENSORS)
    if (folder / SAFETENSORS_INDEX).exists():
        shapes: dict[str, tuple[int, ...]] = {}
        for name in _shard_names(folder):
            shapes.update(read_header(folder / name))
        return shapes
    return None


# -- the judgement --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Judgement:
    """The heads a checkpoint holds trained, and the tasks they serve."""

    heads: frozenset[str]  # class suffixes ("Model": the bare encoder)
    tasks: tuple[str, ...]  # task keys, in the specs' order
    saved_as: tuple[str, ...] = ()  # config.json's architectures
    note: str = ""  # how it was judged where not from its tensors, or what did not fit

    def serves(self, task: str) -> bool:
        return task in self.tasks

    def trained_as(self) -> str:
        """What a person reads: "ModernBertForSequenceClassification (classification, similarity)"."""
        saved = ", ".join(self.saved_as) or "an unnamed class (config.json has no architectures)"
        return f"{saved} ({', '.join(self.tasks) or 'no task'})"


def head_of(model_class: str) -> str:
    """The head suffix of a task spec's Auto class: "AutoModelForQuestionAnswering" -> "ForQuestionAnswering"."""
    return model_class.removeprefix("AutoModel") or BARE


def label_count(config: Mapping[str, Any]) -> int:
    """Outputs of a classifier as transformers counts them: id2label's entries, else num_labels, else 2."""
    id2label = config.get("id2label")
    if isinstance(id2label, dict):
        return len(id2label)
    labels = config.get("num_labels")
    return labels if isinstance(labels, int) and not isinstance(labels, bool) else 2


def _saved_as(config: Mapping[str, Any]) -> tuple[str, ...]:
    found = config.get("architectures")
    return tuple(a for a in found if isinstance(a, str)) if isinstance(found, list) else ()


def _supported(model_type: str, suffix: str) -> bool:
    classes = HEAD_CLASSES.get(model_type)
    return classes is None or suffix in classes


def _claimed(model_type: str, saved: Sequence[str]) -> tuple[set[str], set[str]]:
    """The heads the saved classes are (a masked LM is also AutoModelForPreTraining's class where that
    builds the masked LM), and those plus the heads inside them (BERT's pre-training class holds its
    masked-LM and next-sentence heads)."""
    classes = HEAD_CLASSES.get(model_type)
    direct: set[str] = set()
    for name in saved:
        if classes is not None:
            direct |= {suffix for suffix, cls in classes.items() if cls == name}
        else:
            direct |= {suffix for suffix in SUFFIXES[1:] if name.endswith(suffix)}
    held = set(direct)
    if PRETRAINING in direct and model_type in PRETRAINING_HEADS:
        masked_lm, others = PRETRAINING_HEADS[model_type]
        held |= {MASKED_LM} if masked_lm else set()
        held |= {NEXT_SENTENCE} if NEXT_SENTENCE_HEAD in others and _supported(model_type, NEXT_SENTENCE) else set()
    return direct, held


def _has_module(shapes: Shapes, module: str) -> bool:
    return any(name.startswith(f"{module}.") for name in shapes)


def _has_output(shapes: Shapes, module: str, rows: int, nested: bool = False) -> bool:
    """Whether a weight matrix of `module` has `rows` outputs (a head's last projection); `nested`: the
    module may sit inside another (BigBird's qa_classifier.qa_outputs)."""
    return any(name.endswith("weight") and len(shape) == 2 and shape[0] == rows
               for name, shape in shapes.items()
               if name.startswith(f"{module}.") or (nested and f".{module}." in name))


def _classifier_outputs(shapes: Shapes) -> set[int]:
    return {shape[0] for name, shape in shapes.items()
            if name.startswith(f"{CLASSIFIER}.") and name.endswith("weight") and len(shape) == 2}


def _vocabulary(config: Mapping[str, Any]) -> int | None:
    value = config.get("vocab_size")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _has_masked_lm(config: Mapping[str, Any], shapes: Shapes) -> bool:
    """The masked-LM head's projection to the vocabulary (its bias or weight, vocab_size long) is saved."""
    family = FAMILIES.get(str(config.get("model_type") or ""))
    modules = masked_lm_modules(family) if family else ANY_MASKED_LM
    vocabulary = _vocabulary(config)
    return any(vocabulary is None or vocabulary in shape for module in modules
               for name, shape in shapes.items() if name.startswith(f"{module}."))


def _has_encoder(config: Mapping[str, Any], shapes: Shapes) -> bool:
    """The word embeddings are saved: a (vocab_size, width) matrix named like an embedding."""
    vocabulary = _vocabulary(config)
    return any("embed" in name.lower() and len(shape) == 2 and (vocabulary is None or shape[0] == vocabulary)
               for name, shape in shapes.items())


def _present(model_type: str, config: Mapping[str, Any], shapes: Shapes) -> set[str]:
    """The heads with a name of their own whose tensors are there, with the right shapes."""
    found = set()
    if _has_encoder(config, shapes):
        found.add(BARE)
    if _has_masked_lm(config, shapes):
        found.add(MASKED_LM)
    if _has_output(shapes, NEXT_SENTENCE_HEAD, 2):
        found.add(NEXT_SENTENCE)
    if _has_output(shapes, QA_OUTPUTS, 2, nested=True):
        found.add(QA)
    classes = HEAD_CLASSES.get(model_type) or {}
    if PRETRAINING in classes and classes[PRETRAINING] == classes.get(MASKED_LM):
        found |= {PRETRAINING} if MASKED_LM in found else set()  # AutoModelForPreTraining builds the masked LM
    elif PRETRAINING in classes and model_type in PRETRAINING_HEADS:  # a class of its own (test-checked table)
        masked_lm, others = PRETRAINING_HEADS[model_type]
        if (MASKED_LM in found or not masked_lm) and all(_has_module(shapes, module) for module in others):
            found.add(PRETRAINING)
    return found


def _shared(config: Mapping[str, Any], shapes: Shapes) -> set[str]:
    """The heads a `classifier` of these shapes fits: a 2-row one fits 2 labels of a sequence or token
    classifier, and ModernBERT's QA head. Which one it was trained for, only the saved class says."""
    outputs = _classifier_outputs(shapes)
    labels = label_count(config)
    return {suffix for suffix, rows in ((SEQUENCE, labels), (TOKEN, labels), (CHOICE, 1), (QA, 2)) if rows in outputs}


def judge(config: Mapping[str, Any], shapes: Shapes | None) -> Judgement:
    """The heads a checkpoint holds trained, from its config.json (a checked dict) and its tensors'
    names and shapes (None: not read, judged from config.json alone)."""
    model_type = str(config.get("model_type") or "")
    saved = _saved_as(config)
    direct, held = _claimed(model_type, saved)
    notes = []
    if shapes is None:
        heads = held | {BARE}
    else:
        present, shared = _present(model_type, config, shapes), _shared(config, shapes)
        if saved:  # a shared classifier counts for what it was saved as; outside our families, so does
            unread = {PRETRAINING} if HEAD_CLASSES.get(model_type) is None else set()  # a pre-training class
            heads = present | (shared & held) | (held & unread)
        else:
            heads = present | (shared - {QA})  # a 2-row classifier is a QA head only where the class says so
            if len(shared - {QA}) > 1:
                notes.append("config.json does not say what its classifier was trained for (it has no "
                             "architectures), so it is listed for every task its shape fits")
        notes += [_missing_note(suffix, config, shapes, saved) for suffix in sorted(direct - heads)]
    heads = {suffix for suffix in heads if _supported(model_type, suffix)}
    return Judgement(frozenset(heads), _tasks(heads), saved, "; ".join(dict.fromkeys(notes)))


def _missing_note(suffix: str, config: Mapping[str, Any], shapes: Shapes, saved: Sequence[str]) -> str:
    said = f"config.json names {', '.join(saved)}"
    outputs = _classifier_outputs(shapes)
    if suffix in (SEQUENCE, TOKEN, CHOICE, QA) and outputs:
        labels = label_count(config)
        rows = {SEQUENCE: labels, TOKEN: labels, CHOICE: 1, QA: 2}[suffix]
        return (f"{said}, but its classifier has {', '.join(str(n) for n in sorted(outputs))} outputs where "
                f"{rows} are needed ({labels} labels in config.json's id2label/num_labels)")
    return f"{said}, but its weights hold no such head"


def _tasks(heads: Iterable[str]) -> tuple[str, ...]:
    from bertstudio.core.tasks.spec import all_specs

    held = set(heads)
    return tuple(key for key, spec in all_specs().items() if head_of(spec.model_class) in held)


BIN_ONLY = ("judged from config.json alone: its weights are in pytorch_model.bin, which is never unpickled to "
            "list its tensors (save it as safetensors to have its heads checked)")


def judge_folder(folder: Path, config: Mapping[str, Any]) -> Judgement:
    """`judge` on a model folder's safetensors header (a broken one raises ModelSourceError naming the
    file); a folder with only pytorch_model.bin is judged from config.json and says so."""
    shapes = read_shapes(folder)
    judged = judge(config, shapes)
    if shapes is None:
        return Judgement(judged.heads, judged.tasks, judged.saved_as, "; ".join(filter(None, (BIN_ONLY, judged.note))))
    return judged


def saved_class_tasks(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The tasks whose model class is exactly the saved class (a LoRA adapter's head: only that class
    loads it, with the adapter's own module names)."""
    model_type = str(config.get("model_type") or "")
    classes = HEAD_CLASSES.get(model_type)
    saved = _saved_as(config)
    if classes is None:
        return _tasks({suffix for suffix in SUFFIXES[1:] if any(name.endswith(suffix) for name in saved)})
    return _tasks({suffix for suffix, cls in classes.items() if cls in saved})
