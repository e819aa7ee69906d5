"""The CLI imports only the named subcommand's module: each such parser must read the line exactly as
the whole parser does, and a name it does not know must still list every choice."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from bertstudio.cli import build_parser, command_of


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    return dict(action.choices)


def _options(parser: argparse.ArgumentParser) -> list[tuple[tuple[str, ...], str, object]]:
    return [(tuple(a.option_strings), a.dest, a.default) for a in parser._actions]  # noqa: SLF001


FULL = _subparsers(build_parser())


@pytest.mark.parametrize("name", sorted(FULL))
def test_a_named_command_gets_the_same_subparser(name: str) -> None:
    lazy = _subparsers(build_parser(name))
    assert name in lazy
    assert _options(lazy[name]) == _options(FULL[name])
    assert lazy[name].format_help() == FULL[name].format_help()


def test_an_unknown_command_is_refused_with_every_choice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser("clasify").parse_args(["clasify", "x"])
    err = capsys.readouterr().err
    assert "invalid choice: 'clasify'" in err and "classify" in err and "evaluate" in err


@pytest.mark.parametrize(("argv", "command"), [
    (["classify", "--model", "m", "text"], "classify"),
    (["--models-dir", "classify", "evaluate", "--data", "d"], "evaluate"),
    (["--models-dir=x", "fill-mask", "a [MASK]"], "fill-mask"),
    (["--version"], None),
    ([], None),
    (["--", "classify"], None),
    (["--models", "classify", "evaluate"], "evaluate"),
    (["--models-d=classify", "nsp"], "nsp"),
    (["--help", "classify"], None),
    (["-h", "evaluate"], None),
    (["classify", "--help"], "classify"),
])
def test_the_command_is_read_past_the_global_options(argv: list[str], command: str | None) -> None:
    assert command_of(argv) == command


def test_a_one_text_command_imports_no_other_command() -> None:
    code = ("import sys; from bertstudio.cli import build_parser, command_of; build_parser('classify'); "
            "print(sorted(m for m in sys.modules if m.startswith('bertstudio.cli.') and m != 'bertstudio.cli.common'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = eval(done.stdout)  # noqa: S307 - our own printed list
    assert "bertstudio.cli.classify" in loaded
    assert not {"bertstudio.cli.evaluate", "bertstudio.cli.train", "bertstudio.cli.features"} & set(loaded), loaded


def test_root_help_before_a_command_lists_every_command() -> None:
    done = subprocess.run([sys.executable, "-m", "bertstudio", "--help", "classify"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "evaluate" in done.stdout and "fill-mask" in done.stdout, done.stdout


def test_the_cli_leaves_the_tokenizers_threads_on(monkeypatch: pytest.MonkeyPatch, tmp_path, capsys) -> None:  # noqa: ANN001
    """TOKENIZERS_PARALLELISM=false made every run tokenize on one thread (1.7x slower on 2 cores, more on a
    GPU machine's 16): the CLI must not set it (the suite sets it for its own workers)."""
    import os

    from bertstudio.cli import main

    monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    assert main(["models", "--models-dir", str(tmp_path)]) == 0
    assert "TOKENIZERS_PARALLELISM" not in os.environ
