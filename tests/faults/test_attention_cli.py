"""`bertstudio attention` borders (issue 32, items 13a, 13b): --python never drops --norms or --qk
silently, and --out names the real path and the real reason it cannot be written."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from tests.conftest import run_cli, run_scripts
from tests.faults.test_disk_full import small_disk

TEXT = "the cat sat on the mat"


def largest_norms(result: dict) -> dict[tuple[int, int], tuple[str, str, float]]:
    """Per (layer, head): the (query, key, norm) of the largest value-weighted norm in --json."""
    tokens, found = result["tokens"], {}
    for layer, heads in enumerate(np.asarray(result["norms"], dtype=np.float32)):
        for head, row in enumerate(heads):
            q = int(row.max(axis=-1).argmax())
            k = int(row[q].argmax())
            found[layer, head] = (tokens[q], tokens[k], float(row[q, k]))
    return found


def script_norms(stdout: str) -> dict[tuple[int, int], tuple[str, str, float]]:
    """The script's 'norms layer L head H: largest Q -> K VALUE' lines."""
    found = {}
    for line in stdout.splitlines():
        if line.startswith("norms layer "):
            where, what = line[len("norms "):].split(": largest ")
            _, layer, _, head = where.split()
            query, _, key, value = what.split()
            found[int(layer), int(head)] = (query, key, float(value))
    return found


NORMS_ARCHS = ("bert", "distilbert", "albert")


def _cli(*args: str) -> tuple[int, str, str]:
    """`bertstudio ARGS` in this process: exit code, stdout, stderr (for a module fixture, where capfd is not)."""
    from bertstudio.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def norms_runs(checkpoint_factory, tmp_path_factory) -> dict[str, dict]:  # noqa: ANN001
    """Per architecture: `attention --norms --json` and `--norms --python` of one command, and what
    that script printed when run on its own; the three scripts share one fresh interpreter."""
    runs: dict[str, dict] = {}
    for arch in NORMS_ARCHS:
        folder = str(checkpoint_factory(arch, "Model"))
        runs[arch] = {"json": _cli("attention", "--model", folder, TEXT, "--norms", "--json"),
                      "python": _cli("attention", "--model", folder, TEXT, "--norms", "--python")}
    scripts = {arch: run["python"][1] for arch, run in runs.items() if run["python"][0] == 0}
    printed = run_scripts(scripts, tmp_path_factory.mktemp("norms")) if scripts else {}
    for arch, run in runs.items():
        run["printed"] = printed.get(arch, "")
    return runs


@pytest.mark.parametrize("arch", NORMS_ARCHS)
def test_norms_python_writes_the_norms_script(arch, norms_runs) -> None:  # noqa: ANN001
    """Item 13a: `attention --norms --python` printed the plain attention script (the flag dropped).
    The script's norms equal the command's --norms --json (ALBERT: one shared layer, L hook calls)."""
    run = norms_runs[arch]
    code, stdout, stderr = run["json"]
    assert code == 0, stderr
    expected = largest_norms(json.loads(stdout))
    code, _, stderr = run["python"]
    assert code == 0, stderr
    printed = script_norms(run["printed"])
    assert printed.keys() == expected.keys(), run["printed"]
    for where, (query, key, value) in expected.items():
        assert printed[where][:2] == (query, key), where
        assert printed[where][2] == pytest.approx(value, abs=2e-4), where
    assert "strongest" in run["printed"]  # the attention lines are still there


def test_qk_python_is_refused(checkpoint_factory, capfd) -> None:  # noqa: ANN001
    """Item 13a: `--qk --python` printed the plain script; one head's q·k is not in any script."""
    out = run_cli(capfd, "attention", "--model", str(checkpoint_factory("bert", "Model")), TEXT,
                  "--layer", "0", "--head", "0", "--qk", "--python")
    assert out.returncode == 1 and "--qk" in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == ""


@pytest.mark.parametrize("target", ["/dev/full", "/dev/null"])
def test_out_to_a_device_names_the_whole_path(target, checkpoint_factory, capfd) -> None:  # noqa: ANN001
    """Item 13b: `--out /dev/full` was 'Cannot write 'full': use a .npz…' (neither the path nor why)."""
    out = run_cli(capfd, "attention", "--model", str(checkpoint_factory("bert", "Model")), TEXT, "--out", target)
    assert out.returncode == 1 and f"Cannot write '{target}': it is a device" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_out_on_a_full_disk_names_the_file_and_the_reason(checkpoint_factory, capfd, tmp_path) -> None:  # noqa: ANN001
    """Item 13b, a real full disk: the user's path and 'No space left', no half file left."""
    text = " ".join(["word"] * 60)
    with small_disk(tmp_path / "disk") as disk:
        target = disk / "attention.npz"
        out = run_cli(capfd, "attention", "--model", str(checkpoint_factory("bert", "Model")), text,
                      "--norms", "--out", str(target))
        assert out.returncode == 1, out.stderr
        assert f"Cannot write '{target}': No space left on device" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr and "partial" not in out.stderr
        assert sorted(p.name for p in disk.iterdir()) == ["filler.bin"]


def test_out_with_an_upper_case_extension_writes_that_file(checkpoint_factory, capfd, tmp_path) -> None:  # noqa: ANN001
    """Found here: `--out a.NPZ` passed the (case-blind) extension check, numpy then appended .npz to
    the partial file's name, so the command failed with 'No such file or directory' and left
    a.partial.NPZ.npz behind. An empty --out was silently ignored."""
    folder = str(checkpoint_factory("bert", "Model"))
    target = tmp_path / "a.NPZ"
    out = run_cli(capfd, "attention", "--model", folder, TEXT, "--out", str(target), "--compress")
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.NPZ"]
    with np.load(target) as data:
        assert data["attentions"].shape[:2] == (2, 2) and list(data["tokens"])[0] == "[CLS]"
    out = run_cli(capfd, "attention", "--model", folder, TEXT, "--out", "")
    assert out.returncode == 1 and "--out needs a file name" in out.stderr
