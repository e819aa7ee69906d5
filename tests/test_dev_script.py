"""./dev's choices, with fake Pythons on a fake PATH: which Python, which venv, which torch (issue 44).

Every interpreter here is a stub that answers ./dev's questions (its version, is torch there, is the CPU
index up, is a CPU wheel on disk) and logs the rest (venv, pip) without installing anything: no network,
well under a second a case. The one rule above all: never the CUDA build on a CPU-only machine unasked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ["bash", "dirname", "cat", "sha256sum", "cut", "sort", "head", "rm", "touch", "timeout", "id"]

STUB = """#!{python}
import json, os, shutil, sys
state, args = os.environ["FAKE_STATE"], sys.argv[1:]
with open(os.path.join(state, "log"), "a") as f:
    f.write(json.dumps([sys.argv[0]] + args) + "\\n")
torch_file = os.path.join(state, "torch")
if args[:1] == ["-c"]:
    code = args[1]
    if "sys.version_info" in code:
        print({version!r})
    elif "torch.version" in code:  # which torch build is installed
        if not os.path.exists(torch_file):
            sys.exit(1)
        print(open(torch_file).read().strip())
    elif "urlopen" in code:
        sys.exit(0 if os.environ.get("FAKE_INDEX") == "up" else 1)
    elif "ensurepip" not in code:  # ./dev's own helpers, e.g. reading pip's report
        exec(code)
elif args[:2] == ["-m", "venv"]:
    os.makedirs(os.path.join(args[2], "bin"))
    shutil.copy(sys.argv[0], os.path.join(args[2], "bin", "python"))
    open(os.path.join(args[2], "pyvenv.cfg"), "w").close()
elif args[:3] == ["-m", "pip", "install"] and "--dry-run" in args:
    other = args[args.index("--python-version") + 1] if "--python-version" in args else None
    wheel = os.environ.get("FAKE_WHEEL_" + other.replace(".", "")) if other else os.environ.get("FAKE_WHEEL")
    if not wheel:
        sys.exit(1)
    print(json.dumps({{"install": [{{"metadata": {{"name": "torch", "version": wheel}}}}]}}))
elif args[:3] == ["-m", "pip", "uninstall"] and os.path.exists(torch_file):
    os.remove(torch_file)
elif args[:3] == ["-m", "pip", "install"] and "-e" not in args:
    spec = next((a for a in args if a.startswith("torch")), None)
    if spec:
        cpu = "--index-url" in args or "+cpu" in spec
        version = spec.split("==")[1] if "==" in spec else "2.14.1+cpu" if cpu else "2.14.1"
        open(torch_file, "w").write(("cpu " if cpu else "cuda ") + version)
"""


class Machine:
    """A folder with a copy of ./dev, a PATH of stub Pythons (and nvidia-smi), a pyenv root."""

    def __init__(self, tmp_path: Path) -> None:
        self.repo, self.bin, self.state = tmp_path / "repo", tmp_path / "bin", tmp_path / "state"
        self.pyenv = tmp_path / "pyenv"
        for folder in (self.repo, self.bin, self.state):
            folder.mkdir()
        shutil.copy(ROOT / "dev", self.repo / "dev")
        shutil.copy(ROOT / "pyproject.toml", self.repo / "pyproject.toml")
        for tool in TOOLS:
            found = shutil.which(tool)
            assert found, tool
            (self.bin / tool).symlink_to(found)
        self.env = {
            "PATH": str(self.bin),
            "HOME": str(tmp_path),
            "PYENV_ROOT": str(self.pyenv),
            "FAKE_STATE": str(self.state),
            "LANG": "C.UTF-8",
        }

    def _write(self, path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IEXEC)
        return path

    def python(self, name: str, version: str, folder: Path | None = None) -> Path:
        return self._write((folder or self.bin) / name, STUB.format(python=sys.executable, version=version))

    def broken_shim(self, name: str) -> None:  # pyenv's shim of a version that is installed but not selected
        self._write(self.bin / name, f"#!/bin/sh\necho 'pyenv: {name}: command not found' >&2\nexit 127\n")

    def gpu(self, name: str) -> None:
        self._write(self.bin / "nvidia-smi", f"#!/bin/sh\necho '{name}'\n")

    def dev(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.repo / "dev"), *args], env={**self.env, **env}, capture_output=True, text=True, timeout=60
        )

    def log(self) -> list[list[str]]:
        path = self.state / "log"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def made_venv(self) -> list[tuple[str, str]]:  # (interpreter, venv folder)
        return [(Path(c[0]).name, Path(c[3]).name) for c in self.log() if c[1:3] == ["-m", "venv"]]

    def torch_installs(self) -> list[list[str]]:
        return [
            c[4:]
            for c in self.log()
            if c[1:4] == ["-m", "pip", "install"]
            and "--dry-run" not in c
            and "-e" not in c
            and any(a.startswith("torch") for a in c)
        ]


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    return Machine(tmp_path)


def test_takes_the_newest_supported_python_that_runs(machine: Machine) -> None:
    machine.broken_shim("python3.13")
    machine.python("python3.12", "3.12")
    machine.python("python3.11", "3.11")
    machine.python("python3", "3.11")
    done = machine.dev("setup", FAKE_WHEEL="2.13.0+cpu")
    assert done.returncode == 0, done.stderr
    assert machine.made_venv() == [("python3.12", ".venv")]
    assert "Python 3.12" in done.stderr


def test_python3_counts_when_it_is_a_supported_version(machine: Machine) -> None:
    machine.python("python3", "3.13")
    assert machine.dev("setup", FAKE_WHEEL="2.13.0+cpu").returncode == 0
    assert machine.made_venv() == [("python3", ".venv")]


def test_no_supported_python_says_what_works_in_one_line(machine: Machine) -> None:
    machine.python("python3", "3.10")
    machine.python("python3.13", "3.13", machine.pyenv / "versions" / "3.13.0" / "bin")
    done = machine.dev("test")
    assert done.returncode == 1 and machine.made_venv() == []
    line = done.stderr.strip()
    assert "\n" not in line
    assert "3.13, 3.12 or 3.11" in line and "python3 is 3.10" in line and "./dev --python 3.13" in line


def test_an_older_python_is_refused_even_when_named(machine: Machine) -> None:
    machine.python("python3.10", "3.10")
    done = machine.dev("setup", "--python", "3.10")
    assert done.returncode == 1 and "3.11 or newer" in done.stderr and machine.made_venv() == []


def test_named_python_found_under_pyenv_gets_its_own_venv_beside_dot_venv(machine: Machine) -> None:
    machine.python("python3", "3.11")
    assert machine.dev("setup", FAKE_WHEEL="2.13.0+cpu").returncode == 0
    machine.python("python3.13", "3.13", machine.pyenv / "versions" / "3.13.1" / "bin")
    machine.broken_shim("python3.13")
    done = machine.dev("setup", "--python", "3.13", FAKE_INDEX="up")
    assert done.returncode == 0, done.stderr
    assert machine.made_venv() == [("python3", ".venv"), ("python3.13", ".venv-3.13")]
    # .venv keeps its own Python: a plain ./dev uses it, whatever else is installed
    assert machine.dev("setup").returncode == 0 and len(machine.made_venv()) == 2
    # and naming .venv's version uses .venv
    assert machine.dev("--python", "3.11", "setup").returncode == 0 and len(machine.made_venv()) == 2


def test_cpu_machine_takes_the_cpu_wheel_on_disk_and_says_how_to_switch(machine: Machine) -> None:
    machine.python("python3", "3.11")
    done = machine.dev("setup", FAKE_WHEEL="2.13.0+cpu", FAKE_INDEX="up")
    assert done.returncode == 0, done.stderr
    assert machine.torch_installs() == [["-q", "torch==2.13.0+cpu"]]
    assert "CPU build" in done.stderr and "--torch cuda" in done.stderr
    # the project is installed with that torch pinned, so no dependency swaps it
    project = [c for c in machine.log() if "-e" in c]
    assert project and project[-1][-1] == "torch==2.13.0+cpu"
    # set-up is idempotent: the second run installs nothing
    count = len(machine.log())
    assert machine.dev("setup").returncode == 0
    assert not [c for c in machine.log()[count:] if "install" in c]


def test_cpu_machine_without_a_wheel_on_disk_takes_pytorchs_cpu_index(machine: Machine) -> None:
    machine.python("python3", "3.13")
    done = machine.dev("setup", FAKE_INDEX="up")
    assert done.returncode == 0, done.stderr
    (install,) = machine.torch_installs()
    assert "--index-url" in install and install[install.index("--index-url") + 1].endswith("/whl/cpu")


def test_cpu_machine_never_downloads_the_cuda_build_unasked(machine: Machine) -> None:
    machine.python("python3", "3.13")
    done = machine.dev("test", FAKE_WHEEL_311="2.13.0+cpu")
    assert done.returncode == 1 and machine.torch_installs() == []
    line = done.stderr.strip().splitlines()[-1]
    assert "no CPU build" in line and "several GB" in line and "--torch cuda" in line
    assert "Python 3.11, whose CPU wheel is on this disk: ./dev test --python 3.11" in line
    done = machine.dev("setup", "--torch", "cuda")  # asked for: taken, and said before
    assert machine.torch_installs() == [["-q", "torch>=2.13"]]
    assert "CUDA build" in done.stderr and "several GB" in done.stderr


def test_gpu_machine_takes_the_cuda_build_and_says_how_to_get_the_cpu_one(machine: Machine) -> None:
    machine.python("python3", "3.12")
    machine.gpu("NVIDIA H100 80GB HBM3")
    done = machine.dev("setup", FAKE_WHEEL="2.13.0+cpu")
    assert done.returncode == 0, done.stderr
    assert machine.torch_installs() == [["-q", "torch>=2.13"]]
    assert "NVIDIA H100" in done.stderr and "--torch cpu" in done.stderr


def test_naming_the_other_build_switches_the_venvs_torch(machine: Machine) -> None:
    machine.python("python3", "3.11")
    assert machine.dev("setup", FAKE_WHEEL="2.13.0+cpu").returncode == 0
    done = machine.dev("setup", BERTSTUDIO_TORCH="cuda")
    assert done.returncode == 0, done.stderr
    assert machine.torch_installs()[-1] == ["-q", "torch>=2.13"]
    assert ["-m", "pip", "uninstall", "-q", "-y", "torch"] in [c[1:] for c in machine.log()]
    assert (machine.repo / ".venv" / ".torch").read_text().split()[0] == "cuda"
    # auto keeps what is there: a GPU build on a CPU machine is the user's choice, not undone
    count = len(machine.torch_installs())
    assert machine.dev("setup").returncode == 0 and len(machine.torch_installs()) == count


def test_bad_options_are_refused(machine: Machine) -> None:
    machine.python("python3", "3.11")
    assert machine.dev("setup", "--torch", "rocm").returncode == 1
    assert machine.dev("frobnicate").returncode == 2
    assert machine.dev("setup", "--python", str(machine.repo / "nope")).returncode == 1
    assert machine.made_venv() == []


def test_ci_pins_python_311_where_the_cpu_wheel_lies() -> None:
    assert "./dev test --python 3.11" in (ROOT / ".ci" / "run").read_text()
    assert os.access(ROOT / "dev", os.X_OK)


def test_the_supported_versions_agree_in_dev_pyproject_and_readme() -> None:
    supported = re.search(r"^SUPPORTED=\(([^)]*)\)", (ROOT / "dev").read_text(), re.M)
    assert supported
    versions = sorted(supported.group(1).split(), key=lambda v: tuple(map(int, v.split("."))))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["requires-python"] == f">={versions[0]}"  # no upper pin: pip takes us on any newer Python
    listed = [c.rsplit(" :: ", 1)[1] for c in project["classifiers"] if re.fullmatch(r".*Python :: 3\.\d+", c)]
    assert listed == versions
    said = f"Python {', '.join(versions[:-1])} or {versions[-1]}"
    assert said in (ROOT / "README.md").read_text().replace("**", "")


def test_fuzz_runs_the_fuzz_tests_at_length_with_the_arguments_given(machine: Machine) -> None:
    """`./dev fuzz` (issue 40): the harness of tests/fuzz with many cases; `./dev test` runs a few."""
    machine.python("python3", "3.11")
    done = machine.dev("fuzz", "-x", FAKE_WHEEL="2.13.0+cpu")
    assert done.returncode == 0, done.stderr
    (pytest_run,) = [c for c in machine.log() if c[1:3] == ["-m", "pytest"]]
    assert pytest_run[3:] == ["-p", "no:cacheprovider", "tests/fuzz", "-x"]
    assert "fuzz" in machine.dev("nope").stderr
