"""A real hookline server for the tests: uvicorn serving an app on 127.0.0.1, in a thread."""

from __future__ import annotations

import threading
from typing import Any

import uvicorn

from support.waiting import wait_until

TOKENS = {"tok-alice": "alice", "tok-bob": "bob"}
"""The bearer tokens (and their users) of the servers that check them."""


class LiveServer:
    """uvicorn serving an app on 127.0.0.1, on a free port, in a background thread."""

    def __init__(self, app: Any) -> None:
        self.app = app
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on", ws="none")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="hookline-test-server", daemon=True)
        self.url = ""

    def start(self) -> LiveServer:
        self.thread.start()
        wait_until(lambda: self.server.started or not self.thread.is_alive(), "the test server started")
        assert self.server.started, "the test server did not start"
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)
        assert not self.thread.is_alive(), "the test server did not stop"
