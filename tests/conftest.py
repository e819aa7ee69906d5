"""Shared fixtures: offline, headless, tiny random checkpoints and the real test models."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

# Before anything imports Qt or huggingface_hub.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Crash logs of the code under test go to a throw-away folder, not the user's state folder.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="bertstudio-test-state-")

ROOT = Path(__file__).resolve().parents[1]
REAL_MODELS_SCRIPT = ROOT / "scripts" / "get-test-models.sh"
REAL_MODELS_DIR = Path(
    os.environ.get("BERTSTUDIO_TEST_MODELS", Path.home() / ".cache" / "bertstudio-test-models")
)
REAL_MODEL_NAMES = ("all-minilm-l6-v2", "rxnmapper-albert-smiles-mlm", "categorium-bert-tiny-topics-en")


@pytest.fixture(scope="session")
def checkpoint_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """checkpoint_factory(arch, head="MaskedLM") -> folder of a tiny random checkpoint, built once."""
    from tests.fixtures.checkpoints import build_checkpoint

    built: dict[tuple[str, str], Path] = {}
    root = tmp_path_factory.mktemp("checkpoints")

    def make(arch: str, head: str = "MaskedLM") -> Path:
        key = (arch, head)
        if key not in built:
            built[key] = build_checkpoint(root / f"{arch}-{head}", arch, head)
        return built[key]

    return make


@pytest.fixture(scope="session")
def real_models() -> dict[str, Path]:
    """The real checkpoints that scripts/get-test-models.sh assembles (pinned PyPI packages, sha256-checked, cached)."""
    missing = [n for n in REAL_MODEL_NAMES if not (REAL_MODELS_DIR / n / ".complete").is_file()]
    if missing:
        subprocess.run(
            ["bash", str(REAL_MODELS_SCRIPT), str(REAL_MODELS_DIR)],
            check=True,
            env={**os.environ, "PYTHON": sys.executable},
        )
    return {name: REAL_MODELS_DIR / name for name in REAL_MODEL_NAMES}
