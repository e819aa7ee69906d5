"""Issue 40: every subcommand's arguments fuzzed (Hypothesis, derandomized): each case ends with exit 0
or 1 and one `error:` line (or argparse's usage error), never a traceback, a hang or an out-of-memory,
and changes nothing on disk but its declared outputs. `./dev fuzz` runs many more cases."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import arguments, harness
from tests.fuzz.inputs import ROOT, Inputs, build
from tests.fuzz.known import known_finding, known_hang
from tests.fuzz.seeds import seeds

COMMANDS = {command.name: command for command in arguments.commands()}
# Commands that train or export: a case takes seconds, not a fraction of one.
HEAVY = {"train", "features train", "features lens", "export"}
_case_numbers = itertools.count()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Inputs:
    return build(tmp_path_factory.mktemp("fuzz"))


@pytest.fixture(scope="module", autouse=True)
def _state_elsewhere(inputs: Inputs) -> object:
    """Run records and caches of the cases go to a folder of their own, outside the snapshot."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BERTSTUDIO_RUNS_DIR", str(inputs.root / "state" / "runs"))
        patch.setenv("XDG_CACHE_HOME", str(inputs.root / "state" / "cache"))
        yield


def _declared(argv: list[str]) -> list[str]:
    flags = {"--out", "--output", "--failures"}
    return [value for flag, value in itertools.pairwise(argv) if flag in flags]


def disk_problems(argv: list[str], before: harness.Snapshot, after: harness.Snapshot) -> list[str]:
    """Changes outside the declared outputs; inside them only with --overwrite."""
    declared = [Path(path).absolute() for path in _declared(argv) if path]
    allowed = declared if "--overwrite" in argv else []
    found = []
    for change in harness.changes(before, after):
        path = Path(change.split(" ", 1)[1])
        if not any(path == out or out in path.parents for out in allowed):
            found.append(f"disk: {change}")
    return found


def check_case(command: str, argv: list[str], inputs: Inputs, capfd: pytest.CaptureFixture[str]) -> None:
    watched = [inputs.inputs, ROOT / "resources"]
    before = {k: v for root in watched for k, v in harness.snapshot(root).items()}
    outcome = harness.run_case(argv, capfd, inputs.inputs / "cwd")
    after = {k: v for root in watched for k, v in harness.snapshot(root).items()}
    found = harness.problems(outcome) + disk_problems(argv, before, after)
    unexplained = [problem for problem in found if not known_finding(command, argv, problem, outcome.err)]
    assert not unexplained, harness.describe(outcome, unexplained)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_fuzzed_command_line_ends_cleanly(name: str, inputs: Inputs, capfd: pytest.CaptureFixture[str]) -> None:
    (inputs.inputs / "cwd").mkdir(exist_ok=True)
    command = COMMANDS[name]

    @settings(max_examples=harness.examples(1 if name in HEAVY else 4), deadline=None, derandomize=True,
              database=None, suppress_health_check=list(HealthCheck), print_blob=False)
    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        out = inputs.root / "out" / f"case-{next(_case_numbers)}"
        out.mkdir()
        lines = seeds(inputs, out).get(name, [])
        argv = data.draw(arguments.case(command, inputs, out, lines), label="argv")
        if not known_hang(name, argv):
            check_case(name, argv, inputs, capfd)

    case()
