"""A server on 127.0.0.1 that accepts connections and never answers: a captive portal or a
stalled proxy, the network fault that used to hang BERT Studio inside the Hub client."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def blackhole_server() -> Iterator[str]:
    """Yields its URL (http://127.0.0.1:PORT). Every connection is accepted, read and never answered;
    all are closed on exit so clients that were abandoned end too."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except OSError:
                continue
            held.append(connection)

    thread = threading.Thread(target=serve, daemon=True, name="blackhole-server")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(2)
        for connection in held:
            connection.close()
        server.close()


if __name__ == "__main__":  # for trying the app by hand: HF_ENDPOINT=<printed url> bertstudio
    import time

    with blackhole_server() as url:
        print(url, flush=True)
        time.sleep(3600)


def point_hub_at(url: str, monkeypatch, cache: str) -> None:  # noqa: ANN001
    """Make this process talk to `url` as the Hub (online as far as every library can tell), with an
    empty cache; monkeypatch undoes it after the test."""
    from huggingface_hub import constants

    from bertstudio.core import hub

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_HUB_CACHE", cache)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", cache)
    monkeypatch.setattr(hub, "_probe_cache", None)
