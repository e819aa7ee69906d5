"""Domain errors: a message a user understands, a hint saying what to do, details for the log."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class BertStudioError(Exception):
    """An error we expected and can explain. The UI shows it; the CLI prints it and exits 1."""

    def __init__(self, message: str, hint: str = "", details: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = details

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip()


class InputError(BertStudioError):
    """The text, file or setting the user gave cannot be used as it is."""


class ModelSourceError(BertStudioError):
    """The model source is not a model: a folder without config.json, an unknown Hub id."""


class OfflineError(ModelSourceError):
    """The model is not on this machine and the Hub cannot be reached."""


class MissingHeadError(BertStudioError):
    """The checkpoint lacks the weights a task needs, and random numbers would mislead."""


class DeviceError(BertStudioError):
    """The chosen device cannot run the work (not available, out of memory)."""


class OutOfMemory(DeviceError):
    """The GPU ran out of memory; retrying on the CPU usually works."""


class TaskCancelled(BertStudioError):
    """The user (or a newer request) cancelled the work."""

    def __init__(self, message: str = "Cancelled.") -> None:
        super().__init__(message)


@contextlib.contextmanager
def model_b_errors(source: str) -> Iterator[None]:
    """What goes wrong with the compared model said as model B's, so it is never read as model A's."""
    try:
        yield
    except TaskCancelled:
        raise
    except BertStudioError as error:
        if error.message.startswith("Model B"):
            raise
        error.message = f"Model B ({source}): {error.message}"
        error.args = (error.message,)
        raise
