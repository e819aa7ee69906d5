"""Getting a model folder from a Hugging Face Hub id: offline detected fast, downloads with progress."""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

from bertstudio.core.errors import ModelSourceError, OfflineError
from bertstudio.core.progress import TaskControl

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")
# Everything a model folder needs, without TF/Flax/ONNX copies of the weights.
WANTED = re.compile(
    r"^(config\.json|generation_config\.json|tokenizer(_config)?\.json|special_tokens_map\.json"
    r"|added_tokens\.json|vocab\.(txt|json)|merges\.txt|spiece\.model|sentencepiece\.bpe\.model"
    r"|model(-\d+-of-\d+)?\.safetensors(\.index\.json)?)$"
)
PICKLE_WEIGHTS = re.compile(r"^pytorch_model(-\d+-of-\d+)?\.bin(\.index\.json)?$")
_PROBE_TTL_S = 60.0
_probe_cache: tuple[float, bool] | None = None


def is_hub_id(source: str) -> bool:
    return bool(HUB_ID.match(source)) and ".." not in source


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def hub_reachable(timeout_s: float = 2.5) -> bool:
    """A TCP connect to the Hub, bounded in time (DNS included), so offline is known in seconds."""
    global _probe_cache
    if _truthy("HF_HUB_OFFLINE") or _truthy("TRANSFORMERS_OFFLINE"):
        return False
    now = time.monotonic()
    if _probe_cache is not None and now - _probe_cache[0] < _PROBE_TTL_S:
        return _probe_cache[1]
    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    result = [False]

    def probe() -> None:
        try:
            with socket.create_connection((host, 443), timeout=timeout_s):
                result[0] = True
        except OSError:
            pass

    thread = threading.Thread(target=probe, daemon=True, name="hub-probe")
    thread.start()
    thread.join(timeout_s + 0.5)
    _probe_cache = (now, result[0])
    return result[0]


def _progress_bar_class(control: TaskControl, filename: str, index: int, count: int) -> type:
    """A tqdm that turns byte counts into progress events and honours a stop request."""
    from tqdm.auto import tqdm

    class ReportingTqdm(tqdm):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            self._done = 0

        def update(self, n: float | None = 1) -> bool | None:
            self._done += int(n or 0)
            total = self.total or 0
            within = self._done / total if total else 0.0
            control.report(
                f"Downloading {filename} ({index + 1}/{count}): {self._done / 1e6:.1f} of {total / 1e6:.1f} MB",
                (index + within) / count,
            )
            control.check()
            return None

    return ReportingTqdm


def _choose_files(files: list[str]) -> list[str]:
    """Safetensors when the repo has them; otherwise the pickled .bin (loaded with weights_only)."""
    wanted = [f for f in files if WANTED.match(f)]
    if not any(f.endswith(".safetensors") for f in wanted):
        wanted += [f for f in files if PICKLE_WEIGHTS.match(f)]
    return wanted


def hub_folder(repo_id: str, control: TaskControl) -> Path:
    """The local folder of a Hub model: from the cache when offline, downloaded when online."""
    from huggingface_hub import HfApi, hf_hub_download, snapshot_download

    if not hub_reachable():
        try:
            return Path(snapshot_download(repo_id, local_files_only=True))
        except Exception as error:
            raise OfflineError(
                f"'{repo_id}' is not on this machine and the Hugging Face Hub cannot be reached (offline).",
                hint="Choose a local model folder (Open folder…, --model PATH, or a models folder set with "
                "--models-dir / BERTSTUDIO_MODELS_DIR).",
                details=repr(error),
            ) from error
    try:
        files = _choose_files(HfApi().list_repo_files(repo_id))
    except Exception as error:
        raise ModelSourceError(
            f"'{repo_id}' was not found on the Hugging Face Hub.",
            hint="Check the spelling (for example google-bert/bert-base-uncased) or choose a local folder.",
            details=repr(error),
        ) from error
    if "config.json" not in files:
        raise ModelSourceError(f"'{repo_id}' has no config.json: it is not a transformers model.")
    folder: Path | None = None
    for index, filename in enumerate(files):
        control.check()
        tqdm_class = _progress_bar_class(control, filename, index, len(files))
        folder = Path(hf_hub_download(repo_id, filename, tqdm_class=tqdm_class)).parent
    control.report(f"Downloaded {repo_id}", 1.0)
    assert folder is not None
    return folder
