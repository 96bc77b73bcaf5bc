"""A hook that writes down where and when it runs, to put under every hook point."""

from __future__ import annotations

from typing import Any

from hookline import HookPoint, State


class Tracer:
    """A class hook recording `(point, turn)` each time it runs; put it under every point."""

    def __init__(self) -> None:
        self.trace: list[tuple[str, int]] = []

    def run(self, state: State) -> None:
        assert state.point is not None
        self.trace.append((state.point.value, state.turn))

    def points(self) -> list[str]:
        return [point for point, _ in self.trace]


def at_every_point(item: Any) -> dict[str, list[Any]]:
    """`{point: [item]}` for every hook point."""
    return {point.value: [item] for point in HookPoint}
