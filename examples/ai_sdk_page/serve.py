"""Serve the example page, and pass its `/v1/...` requests on to a hookline server.

    npm install && npm run build                      # dist/app.js
    hookline serve myapp:agent                        # the API, at http://127.0.0.1:8000
    python serve.py --api http://127.0.0.1:8000       # the page, at http://127.0.0.1:8001/

Page and API then share one origin, so the browser needs no CORS, and a bearer token stays out
of the page: set `HOOKLINE_TOKEN` and this server adds it to every request it passes on. The
answers stream through as they come. Only the standard library; for development, not production.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, urlsplit

HERE = Path(__file__).resolve().parent
NOT_PASSED_ON = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                 "transfer-encoding", "upgrade", "host"}
"""Headers of one connection (hop-by-hop), and the Host, which names this server."""


class PageAndApi(SimpleHTTPRequestHandler):
    """This folder's files; `/v1/...` relayed to the hookline server at `api`."""

    def __init__(self, *args: Any, api: SplitResult, **kwargs: Any) -> None:
        self.api = api
        super().__init__(*args, directory=str(HERE), **kwargs)

    def do_GET(self) -> None:
        if self.path.startswith("/v1/"):
            self.relay()
        else:
            super().do_GET()

    def do_POST(self) -> None:
        if self.path.startswith("/v1/"):
            self.relay()
        else:
            self.send_error(405)

    def relay(self) -> None:
        """Send the request on to the API, and its answer back as it arrives."""
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in NOT_PASSED_ON}
        if token := os.environ.get("HOOKLINE_TOKEN"):
            headers["Authorization"] = f"Bearer {token}"
        connection = http.client.HTTPSConnection if self.api.scheme == "https" else http.client.HTTPConnection
        upstream = connection(self.api.netloc)
        try:
            upstream.request(self.command, self.path, body, headers)
            answer = upstream.getresponse()
        except OSError as exc:
            upstream.close()
            self.send_error(502, f"no answer from the hookline server at {self.api.geturl()}: {exc}")
            return
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in NOT_PASSED_ON:
                self.send_header(name, value)
        self.end_headers()  # HTTP/1.0: the answer ends when this connection closes
        try:
            while chunk := answer.read1():
                self.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page stopped reading; closing the upstream connection tells the API
        finally:
            upstream.close()


def main() -> None:
    """Serve until Ctrl-C."""
    parser = argparse.ArgumentParser(description="Serve the AI SDK example page and pass /v1 on to hookline.")
    parser.add_argument("--api", default="http://127.0.0.1:8000", help="the hookline server")
    parser.add_argument("--port", type=int, default=8001, help="the page's port on 127.0.0.1 (0: any free one)")
    options = parser.parse_args()
    handler = partial(PageAndApi, api=urlsplit(options.api))
    with ThreadingHTTPServer(("127.0.0.1", options.port), handler) as server:
        print(f"the page: http://127.0.0.1:{server.server_port}/ (its /v1: {options.api})", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()


if __name__ == "__main__":
    main()
