"""Command lines drawn from the CLI's own parsers: every subcommand, each of its arguments given
right-typed, wrong-typed, out-of-bound or special values; paths to good files, broken files and
special files (tests/fuzz/inputs.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from tests.fuzz.inputs import Inputs

MODEL_DESTS = {"model", "compare", "mask_model", "distill_teacher", "merge", "mlm"}
DATA_DESTS = {"data", "train_file", "eval_file", "file", "corpus", "concept", "context_file", "search_space"}
FOLDER_DESTS = {"runs_dir", "models_dir", "models_dir_sub"}
OUTPUT_DESTS = {"out", "output", "output_dir", "failures"}
OTHER_FILE_DESTS = {"sae", "tuned_lens"}

NUMBERS = ("0", "1", "2", "3", "-1", "-3", "0.5", "1e-3", "nan", "inf", "-inf", "1e309", "10000000000000",
           "99999999999999999999", "0x10", "1_000", "", "abc", "½")
INTS = ("0", "1", "2", "3", "-1", "-3", "7", "64", "10000000000000", "99999999999999999999")
FLOATS = ("0", "0.5", "1", "1e-3", "-1", "2.5", "nan", "inf", "-inf", "1e30", "1e-30")
TEXTS = ("", " ", "the [MASK] sat on the mat .", "[MASK]", "<mask> is here", "Paris is in France .",
         "{x:>300000000}", "{x:{x}}", "{", "a\x00b", "\udcff\udcfe", "naïve café", "-", "--", "[CLS] [SEP] [PAD]",
         "word " * 4000, "\n\n\t", "finance", "positive", "O", "B-PER")
DEVICES = ("cpu", "cpu", "cuda", "cuda:7", "mps", "meta", "tpu", "", "-1")
HEAD_LISTS = ("0:0", "0:0,1:1", "99:99", "-1:0", "x", "", "0:", "0:0,0:0")


@dataclass(frozen=True)
class Command:
    """A (sub)subcommand: its words on the command line and its parser."""

    words: tuple[str, ...]
    parser: argparse.ArgumentParser

    @property
    def name(self) -> str:
        return " ".join(self.words)


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse has no public way to list its subparsers
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def commands() -> list[Command]:
    """Every leaf command of `bertstudio`, nested ones (`features train`) included."""
    from bertstudio.cli import build_parser

    found = []
    pending = [((), build_parser())]
    while pending:
        words, parser = pending.pop()
        children = _subparsers(parser)
        if words and not children:
            found.append(Command(words, parser))
        pending.extend(((*words, name), child) for name, child in children.items())
    return sorted(found, key=lambda c: c.words)


def _texts() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(TEXTS), st.text(max_size=40))


def value_strategy(action: argparse.Action, inputs: Inputs, out: Path) -> st.SearchStrategy[str]:
    """Values for one argument: the right kind mostly, the wrong kind sometimes."""
    dest = action.dest
    files = inputs.specials
    if dest in MODEL_DESTS:
        good = st.sampled_from(inputs.models)
        bad = st.sampled_from([*files, *inputs.folders, "no-such-org/no-such-model", "../../etc"])
    elif dest in DATA_DESTS:
        good, bad = st.sampled_from(inputs.data), st.sampled_from([*files, *inputs.suites, *inputs.models])
    elif dest == "suite":
        good, bad = st.sampled_from([*inputs.suites, "sentiment", "ner"]), st.sampled_from([*files, *inputs.data])
    elif dest in FOLDER_DESTS:
        good, bad = st.sampled_from(inputs.folders), st.sampled_from(files)
    elif dest in OUTPUT_DESTS:
        new = [str(out / name) for name in ("new", "new.onnx", "new.csv", "deeper/than/asked/new")]
        good = st.sampled_from(new)
        # never a device: a writer that replaces what it is given would replace /dev/null for the machine
        ours = [path for path in files if path and not path.startswith("/dev/")]
        bad = st.sampled_from([*ours, *inputs.data[:3], inputs.models[0], str(out)])
    elif dest in OTHER_FILE_DESTS:
        good, bad = st.sampled_from([*inputs.models, *inputs.data]), st.sampled_from(files)
    elif action.choices is not None:
        good = st.sampled_from(list(action.choices))
        bad = st.sampled_from(["", "nope", str(next(iter(action.choices))).upper()])
    elif dest == "device":
        return st.sampled_from(DEVICES)
    elif dest == "ablate_heads":
        return st.sampled_from(HEAD_LISTS)
    elif action.type is int:
        good, bad = st.sampled_from(INTS), st.sampled_from(NUMBERS)
    elif action.type is float:
        good, bad = st.sampled_from(FLOATS), st.sampled_from(NUMBERS)
    else:
        return st.one_of(st.sampled_from(NUMBERS), _texts())
    return st.one_of(good, good, good, bad)  # three good for one bad


def _option(flag: str, *values: str) -> list[str]:
    """`--flag value`, or `--flag=-1` where argparse would take the value for an option."""
    if len(values) == 1 and values[0].startswith("-"):
        return [f"{flag}={values[0]}"]
    return [flag, *values]


def _is_required(action: argparse.Action) -> bool:
    return action.required or (not action.option_strings and action.nargs not in ("?", "*"))


def _count(action: argparse.Action) -> tuple[int, int]:
    """How many values one occurrence takes (argparse's nargs)."""
    nargs = action.nargs
    if nargs is None:
        return 1, 1
    if nargs == "?":
        return 0, 1
    if nargs == "*":
        return 0, 3
    if nargs == "+":
        return 1, 3
    return int(nargs), int(nargs)  # type: ignore[arg-type]


@st.composite
def argv(draw: st.DrawFn, command: Command, inputs: Inputs, out: Path) -> list[str]:
    """One command line: every required argument (rarely left out), some optional ones."""
    options: list[str] = []
    positionals: list[str] = []
    for action in command.parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._VersionAction):
            continue
        wanted = draw(st.integers(0, 19)) > 0 if _is_required(action) else draw(st.booleans())
        if not wanted:
            continue
        if action.option_strings and action.nargs == 0:
            options.append(action.option_strings[0])
            continue
        low, high = _count(action)
        values = [draw(value_strategy(action, inputs, out)) for _ in range(draw(st.integers(low, high)))]
        if action.option_strings:
            repeats = draw(st.integers(1, 2)) if isinstance(action, argparse._AppendAction) else 1
            for _ in range(repeats):
                options += _option(action.option_strings[0], *values)
        else:
            positionals += values
    if positionals:
        options += ["--", *positionals] if draw(st.booleans()) else positionals
    return [*command.words, *options]


@st.composite
def mutated(draw: st.DrawFn, command: Command, seed: list[str], inputs: Inputs, out: Path) -> list[str]:
    """`seed` with one to three arguments set to a drawn value (right or wrong) or left out."""
    line = list(seed)
    actions = [a for a in command.parser._actions if not isinstance(a, argparse._HelpAction)]
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(actions))
        flag = action.option_strings[0] if action.option_strings else None
        present = [i for i, word in enumerate(line) if word in action.option_strings]
        if flag is None:  # a positional: the seed's last word is one
            line[-1] = draw(value_strategy(action, inputs, out))
        elif present and draw(st.integers(0, 7)) == 0:  # left out
            at = present[0]
            del line[at: at + (1 if action.nargs == 0 else 2)]
        elif action.nargs == 0:
            line.insert(len(command.words), flag)
        elif present and action.nargs in (None, "?"):
            line[present[0] + 1] = draw(value_strategy(action, inputs, out))
        else:
            line[len(command.words):len(command.words)] = _option(flag, draw(value_strategy(action, inputs, out)))
    return line


def case(command: Command, inputs: Inputs, out: Path, seed_lines: list[list[str]]) -> st.SearchStrategy[list[str]]:
    """Mostly a working line changed a little; sometimes one drawn from the parser alone."""
    from_seeds = st.sampled_from(seed_lines).flatmap(lambda seed: mutated(command, seed, inputs, out))
    return st.one_of(from_seeds, from_seeds, from_seeds, argv(command, inputs, out)) if seed_lines else \
        argv(command, inputs, out)
