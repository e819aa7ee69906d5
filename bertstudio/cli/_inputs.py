"""A task's input on a command line, declared once on its spec (`TaskSpec.parts`): its own command adds
those arguments; explain, counterfactual, patch and head-importance add every task's named parts and take
the unnamed ones as INPUT..., so `explain --task qa` takes the question and context the way `qa` does."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bertstudio.core.tasks.spec import Part, TaskSpec


def _add(parser: argparse.ArgumentParser, part: Part, owner: str, required: bool) -> None:
    where: Any = parser.add_mutually_exclusive_group(required=required) if part.file else parser
    how: dict[str, Any] = {"dest": part.dest, "required": required and not part.file} if part.flag else \
        {"nargs": "+" if part.many else None if required else "?"}
    if part.flag and part.many:
        how |= {"action": "append", "default": []}
    where.add_argument(part.flag or part.dest, metavar=part.metavar, help=owner + part.help, **how)
    if part.file:
        where.add_argument(part.file, dest=f"{part.dest}_file", metavar="F",
                           help=f"{owner}read the {part.dest} from a UTF-8 text file (long texts)")


def add_parts(parser: argparse.ArgumentParser, task: str) -> None:
    """The task's own command: its parts as its arguments (`task`: its key)."""
    from bertstudio.core.tasks.spec import spec_for

    for part in spec_for(task).parts:
        _add(parser, part, "", part.required)


def values(args: argparse.Namespace, part: Part) -> list[str]:
    """What a part was given: its value(s), or its file read through core.files (a FIFO, a device, a folder,
    a file over 16 MiB or one that is not UTF-8 text is one message); nothing: []."""
    path = getattr(args, f"{part.dest}_file", None) if part.file else None
    if path is not None:
        from bertstudio.core.files import read_text
        from bertstudio.core.limits import MAX_CONTEXT_BYTES

        return [read_text(path, f"{part.dest} file", MAX_CONTEXT_BYTES)]
    value = getattr(args, part.dest, None)
    return [] if value is None else [str(item) for item in value] if isinstance(value, list) else [str(value)]


def usage(spec: TaskSpec) -> str:
    """'--question QUESTION (--context CONTEXT | --context-file F)': the parts as the task's command takes them."""
    words = []
    for part in spec.parts:
        name = f"{part.flag} {part.metavar or part.dest.upper()}".strip()
        shown = f"{name} [{name} ...]" if part.many else name
        words.append(f"({shown} | {part.file} F)" if part.file else shown if part.required else f"[{shown}]")
    return " ".join(words)


def add_input_options(parser: argparse.ArgumentParser, specs: Sequence[TaskSpec], task_help: str) -> None:
    """--model, --task (one of `specs`), the input (every named part once, the unnamed ones as INPUT...),
    --device, --dtype and --json; the parser's description ends with what each task takes."""
    parser.description = (f"{parser.description or ''}\nWhich input each task takes (as its own command does, or "
                          "its parts in order as INPUT...):\n" +
                          "".join(f"  {spec.cli_name:<10} {usage(spec)}\n" for spec in specs))
    parser.add_argument("--model", required=True, metavar="SRC", help="Hub id or local model folder")
    parser.add_argument("--task", required=True, choices=[spec.cli_name for spec in specs], help=task_help)
    parser.add_argument("inputs", metavar="INPUT", nargs="*", help="the task's input (see above)")
    named: dict[str, tuple[TaskSpec, Part]] = {}
    for spec in specs:
        named.update({part.flag: (spec, part) for part in spec.parts if part.flag and part.flag not in named})
    for spec, part in named.values():
        _add(parser, part, f"{spec.cli_name}: ", required=False)
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1 or mps (default: cpu)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"],
                        help="number format; half precision on GPUs only")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")


def task_texts(args: argparse.Namespace, spec: TaskSpec) -> tuple[str, ...]:
    """The parts given for `spec`, in its order, the INPUTs standing where its first unnamed part stands
    (`--question Q --context C` and `Q C` alike); another task's named part is one message."""
    from bertstudio.core.errors import InputError
    from bertstudio.core.tasks.spec import all_specs

    own = {part.flag for part in spec.parts}
    foreign = next((part.flag for other in all_specs().values() for part in other.parts
                    if part.flag and part.flag not in own
                    and (getattr(args, part.dest, None) or getattr(args, f"{part.dest}_file", None))), None)
    if foreign:
        raise InputError(f"{spec.cli_name} takes no {foreign}.", hint=f"{spec.cli_name}: {usage(spec)}")
    texts: list[str] = []
    rest = [str(text) for text in args.inputs]
    for part in spec.parts:
        texts, rest = (texts + values(args, part), rest) if part.flag else (texts + rest, [])
    return (*texts, *rest)


def checked(spec: TaskSpec, texts: tuple[str, ...], where: str = "") -> tuple[str, ...]:
    """`texts` where the task's Explain adapter takes them; else one line naming the command
    ("--corrupted: classify takes a text, or a text and its pair.")."""
    from bertstudio.core.errors import InputError
    from bertstudio.core.explain.inputs import WrongParts
    from bertstudio.core.tasks.spec import ExplainAdapter, adapter_for

    try:
        adapter_for(spec.key, ExplainAdapter).inputs_of(texts)
    except WrongParts as error:
        raise InputError(f"{where}{spec.cli_name} takes {error.takes}.", hint=error.hint) from None
    return texts
