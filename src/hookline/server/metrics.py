"""`GET /metrics`: this process's runs in the Prometheus text format, for a scraper.

Counted as runs end (`RunManager.when_ended`), so reading costs nothing per run:

| metric | type | what |
|---|---|---|
| `hookline_runs_started_total` | counter | runs started in this process |
| `hookline_runs_ended_total{outcome}` | counter | runs ended, by stop reason, or `failed` |
| `hookline_run_duration_seconds` | histogram | from a run's start to its end |
| `hookline_tokens_total{kind}` | counter | `input` and `output` tokens of the runs ended |
| `hookline_runs_active` | gauge | runs going on now |
| `hookline_runs_queued` | gauge | runs waiting in this process's session queues (`"if_busy": "enqueue"`) |
| `hookline_webhook_attempts_total{result}` | counter | webhook attempts: `delivered`, `failed`, `refused` |

The route asks for a token as the API does (a scraper sends one: Prometheus's
`authorization` setting). Each process counts its own: sum them across processes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Protocol

from fastapi import APIRouter, Depends, Request
from starlette.responses import Response

from hookline.server.auth import current_user
from hookline.server.runs import RunChannel, RunManager

__all__ = ["Metrics", "metrics_api"]

_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _Counts(Protocol):
    def queued(self) -> int: ...

    def webhook_results(self) -> Counter[str]: ...


class Metrics:
    """The counters of one server process.

    Args:
        runs: The runs of this process (it counts each as it ends).
        service: Runs with ids: their queues and webhooks.

    """

    def __init__(self, runs: RunManager, service: _Counts) -> None:
        self._runs, self._service = runs, service
        self.started = 0
        self.ended: Counter[str] = Counter()
        self.tokens: Counter[str] = Counter()
        self._buckets = [0] * len(_BUCKETS)
        self._durations = (0, 0.0)  # count, sum
        runs.when_started(self._started)
        runs.when_ended(self._ended)

    def _started(self, session_id: str) -> None:
        self.started += 1

    def _ended(self, channel: RunChannel) -> None:
        result, error = channel.result, channel.error
        self.ended["failed" if error is not None or result is None else result.stop_reason] += 1
        if result is not None:
            self.tokens["input"] += result.usage.input_tokens
            self.tokens["output"] += result.usage.output_tokens
        seconds = max(0.0, channel.finished_at - channel.started_at)
        for index, bound in enumerate(_BUCKETS):
            if seconds <= bound:
                self._buckets[index] += 1
        count, total = self._durations
        self._durations = (count + 1, total + seconds)

    def render(self) -> str:
        """The metrics in the Prometheus text exposition format (0.0.4)."""
        lines = _counter("hookline_runs_started_total", "Runs started in this process.", {"": self.started})
        lines += _counter("hookline_runs_ended_total", "Runs ended, by outcome.", self.ended, label="outcome")
        lines += _counter("hookline_tokens_total", "Tokens of the runs ended.", self.tokens, label="kind")
        lines += self._histogram()
        lines += _gauge("hookline_runs_active", "Runs going on now.", self._runs.running)
        lines += _gauge("hookline_runs_queued", "Runs waiting in session queues.", self._service.queued())
        lines += _counter("hookline_webhook_attempts_total", "Webhook attempts, by result.",
                          self._service.webhook_results(), label="result")
        return "\n".join(lines) + "\n"

    def _histogram(self) -> list[str]:
        name = "hookline_run_duration_seconds"
        lines = [f"# HELP {name} From a run's start to its end.", f"# TYPE {name} histogram"]
        lines += [f'{name}_bucket{{le="{bound:g}"}} {n}' for bound, n in zip(_BUCKETS, self._buckets, strict=True)]
        count, total = self._durations
        return [*lines, f'{name}_bucket{{le="+Inf"}} {count}', f"{name}_sum {total:.6f}", f"{name}_count {count}"]


def _counter(name: str, about: str, values: Counter[str] | dict[str, int], *, label: str = "") -> list[str]:
    lines = [f"# HELP {name} {about}", f"# TYPE {name} counter"]
    return lines + [f'{name}{{{label}="{key}"}} {n}' if label else f"{name} {n}" for key, n in sorted(values.items())]


def _gauge(name: str, about: str, value: int) -> list[str]:
    return [f"# HELP {name} {about}", f"# TYPE {name} gauge", f"{name} {value}"]


metrics_api = APIRouter(tags=["server"])
_User = Depends(current_user)


@metrics_api.get("/metrics", response_class=Response, responses={200: {"content": {_CONTENT_TYPE: {}}}})
async def metrics(request: Request, user: str = _User) -> Response:
    """This process's runs, their outcomes, durations and tokens, queues and webhooks (Prometheus text)."""
    found: Callable[[], str] = request.app.state.metrics.render
    return Response(found(), media_type=_CONTENT_TYPE)
