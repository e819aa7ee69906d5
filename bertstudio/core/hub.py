"""Getting a model folder from a Hugging Face Hub id: offline detected fast, downloads with progress,
and no network call without a bound (a stalled Hub costs seconds, never a hang)."""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import urlparse

from bertstudio.core.errors import ModelSourceError, OfflineError, TaskCancelled
from bertstudio.core.progress import TaskControl

T = TypeVar("T")
TIMEOUT_ENV = "BERTSTUDIO_HUB_TIMEOUT"
DEFAULT_TIMEOUT_S = 10.0
OFFLINE_HINT = ("Choose a local model folder (Open folder…, --model PATH, or a models folder set with "
                "--models-dir / BERTSTUDIO_MODELS_DIR); HF_HUB_OFFLINE=1 skips the Hub.")

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")
# Everything a model folder needs, without TF/Flax/ONNX copies of the weights.
WANTED = re.compile(
    r"^(config\.json|generation_config\.json|tokenizer(_config)?\.json|special_tokens_map\.json"
    r"|added_tokens\.json|vocab\.(txt|json)|merges\.txt|spiece\.model|sentencepiece\.bpe\.model|spm\.model"
    r"|tokenizer\.model"
    r"|model(-\d+-of-\d+)?\.safetensors(\.index\.json)?)$"
)
PICKLE_WEIGHTS = re.compile(r"^pytorch_model(-\d+-of-\d+)?\.bin(\.index\.json)?$")
_PROBE_TTL_S = 60.0
_probe_cache: tuple[float, bool] | None = None


def is_hub_id(source: str) -> bool:
    return bool(HUB_ID.match(source)) and ".." not in source


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def network_timeout() -> float:
    """How long the Hub may stay silent before we give up: BERTSTUDIO_HUB_TIMEOUT seconds (default 10)."""
    try:
        value = float(os.environ.get(TIMEOUT_ENV, "") or DEFAULT_TIMEOUT_S)
    except ValueError:
        value = DEFAULT_TIMEOUT_S
    return value if value > 0 else DEFAULT_TIMEOUT_S


def _endpoint() -> tuple[str, int]:
    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    return url.hostname or "huggingface.co", url.port or (80 if url.scheme == "http" else 443)


def hub_reachable(timeout_s: float = 2.5) -> bool:
    """A TCP connect to the Hub, bounded in time (DNS included), so offline is known in seconds.
    A connect says nothing about answers: every later call is bounded too (`_bounded`)."""
    global _probe_cache
    if _truthy("HF_HUB_OFFLINE") or _truthy("TRANSFORMERS_OFFLINE"):
        return False
    now = time.monotonic()
    if _probe_cache is not None and now - _probe_cache[0] < _PROBE_TTL_S:
        return _probe_cache[1]
    address = _endpoint()
    result = [False]

    def probe() -> None:
        try:
            with socket.create_connection(address, timeout=timeout_s):
                result[0] = True
        except OSError:
            pass

    thread = threading.Thread(target=probe, daemon=True, name="hub-probe")
    thread.start()
    thread.join(timeout_s + 0.5)
    _probe_cache = (now, result[0])
    return result[0]


class HubStalled(Exception):
    """The Hub accepted the connection but did not answer in time."""


def _bounded(call: Callable[[], T], control: TaskControl, what: str, activity: list[float] | None = None) -> T:
    """Run a network call in a daemon thread; give up when it is silent for `network_timeout()` s
    (progress in `activity` counts as an answer) or at once when a stop is requested. The thread
    is abandoned, never joined: a stalled socket must not hold the worker, Cancel or the exit."""
    limit = network_timeout()
    box: dict[str, Any] = {}
    done = threading.Event()
    clock = activity if activity is not None else [time.monotonic()]
    clock[0] = time.monotonic()

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = error
        finally:
            done.set()

    threading.Thread(target=target, daemon=True, name=f"hub: {what}"[:60]).start()
    while not done.wait(0.05):
        control.check()
        if time.monotonic() - clock[0] > limit:
            raise HubStalled(f"{what}: no answer from the Hub in {limit:.0f} s")
    if "error" in box:
        raise box["error"]
    return cast(T, box["value"])


def _limit_library_timeouts() -> None:
    """huggingface_hub's own per-request timeouts, so abandoned threads end soon too."""
    from huggingface_hub import constants

    limit = max(1, int(network_timeout()))
    if not os.environ.get("HF_HUB_ETAG_TIMEOUT"):
        constants.HF_HUB_ETAG_TIMEOUT = limit
    if not os.environ.get("HF_HUB_DOWNLOAD_TIMEOUT"):
        constants.HF_HUB_DOWNLOAD_TIMEOUT = limit


def _progress_bar_class(
    control: TaskControl, filename: str, index: int, count: int, activity: list[float] | None = None
) -> type:
    """A tqdm that turns byte counts into progress events, marks the Hub as answering, and
    honours a stop request."""
    from tqdm.auto import tqdm

    class ReportingTqdm(tqdm):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)
            self._done = 0

        def update(self, n: float | None = 1) -> bool | None:
            self._done += int(n or 0)
            if activity is not None:
                activity[0] = time.monotonic()
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


def _cached_folder(repo_id: str) -> Path | None:
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id, local_files_only=True))
    except Exception:  # noqa: BLE001 - not in the cache, whatever the reason
        return None


def _offline_error(repo_id: str, reason: str, error: BaseException | None = None) -> OfflineError:
    return OfflineError(
        f"'{repo_id}' is not on this machine and {reason}.",
        hint=OFFLINE_HINT,
        details=repr(error) if error is not None else "",
    )


def _is_not_found(error: BaseException) -> bool:
    from huggingface_hub.errors import RepositoryNotFoundError, RevisionNotFoundError

    return isinstance(error, (RepositoryNotFoundError, RevisionNotFoundError))


def hub_folder(repo_id: str, control: TaskControl) -> Path:
    """The local folder of a Hub model: from the cache when offline, downloaded when online.

    Every network call is bounded (`_bounded`): a Hub that accepts connections and never answers
    (captive portal, stalled proxy) falls back to the cached copy or fails within seconds, naming
    the model, and a stop request ends the wait at once."""
    from huggingface_hub import HfApi, hf_hub_download

    if not hub_reachable():
        cached = _cached_folder(repo_id)
        if cached is None:
            raise _offline_error(repo_id, "the Hugging Face Hub cannot be reached (offline)")
        return cached
    _limit_library_timeouts()
    control.report(f"Asking the Hugging Face Hub for {repo_id}…", None)
    try:
        listed = _bounded(lambda: HfApi().list_repo_files(repo_id), control, f"listing {repo_id}")
    except TaskCancelled:
        raise
    except Exception as error:
        if _is_not_found(error):
            raise ModelSourceError(
                f"'{repo_id}' was not found on the Hugging Face Hub (or it is private or gated).",
                hint="Check the spelling (for example google-bert/bert-base-uncased) or choose a local folder.",
                details=repr(error),
            ) from error
        cached = _cached_folder(repo_id)  # the Hub misbehaves, the cache may still have it
        if cached is not None:
            control.report(f"The Hub did not answer; using the cached copy of {repo_id}", None)
            return cached
        reason = (f"the Hugging Face Hub did not answer within {network_timeout():.0f} s"
                  if isinstance(error, HubStalled) else "the Hugging Face Hub could not be reached")
        raise _offline_error(repo_id, reason, error) from error
    files = _choose_files(listed)
    if "config.json" not in files:
        raise ModelSourceError(f"'{repo_id}' has no config.json: it is not a transformers model.")
    folder: Path | None = None
    for index, filename in enumerate(files):
        control.check()
        activity = [time.monotonic()]
        tqdm_class = _progress_bar_class(control, filename, index, len(files), activity)
        try:
            path = _bounded(
                lambda name=filename, bar=tqdm_class: hf_hub_download(  # type: ignore[misc]
                    repo_id, name, tqdm_class=bar, etag_timeout=network_timeout()),
                control, f"downloading {filename} of {repo_id}", activity)
        except TaskCancelled:
            raise
        except Exception as error:
            reason = (f"the download of {filename} stalled (no data for {network_timeout():.0f} s)"
                      if isinstance(error, HubStalled) else f"downloading {filename} failed")
            raise _offline_error(repo_id, reason, error) from error
        folder = Path(path).parent
    control.report(f"Downloaded {repo_id}", 1.0)
    assert folder is not None
    return folder
