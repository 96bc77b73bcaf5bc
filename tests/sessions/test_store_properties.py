"""Random interleavings of prepare and append by several authors, checked against a model.

The model is the rule of DESIGN §3 in a few lines of plain Python: prepared parts
accumulate per author; that author's next append takes them (prepared parts first);
other authors' appends leave them pending; pending parts show as one partial event per
author after the log (by author name), in `ui` and `all` but never in `prompt`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hookline.events import Event
from hookline.messages import TextPart
from hookline.sessions import SessionStore

pytestmark = pytest.mark.anyio

AUTHORS = ["user", "assistant", "add"]
Shown = tuple[int | None, str, str, tuple[str, ...], bool]  # seq, author, kind, texts, partial


@dataclass(frozen=True)
class Prepare:
    author: str
    texts: tuple[str, ...]


@dataclass(frozen=True)
class Append:
    batch: tuple[tuple[str, str, tuple[str, ...]], ...]  # (author, kind, texts) per event


@dataclass
class Model:
    log: list[Shown] = field(default_factory=list)
    pending: dict[str, list[str]] = field(default_factory=dict)

    def prepare(self, op: Prepare) -> tuple[str, ...]:
        self.pending.setdefault(op.author, []).extend(op.texts)
        return tuple(self.pending[op.author])

    def append(self, op: Append) -> list[Shown]:
        stored = []
        for author, kind, texts in op.batch:
            merged = (*self.pending.pop(author, []), *texts)
            stored.append((len(self.log) + 1, author, kind, merged, False))
            self.log.append(stored[-1])
        return stored

    def view(self, view: str, after_seq: int) -> list[Shown]:
        logged = [e for e in self.log if e[0] is not None and e[0] > after_seq]
        if view == "prompt":
            return [e for e in logged if e[2] == "message"]
        partials = [(None, a, "message", tuple(t), True) for a, t in sorted(self.pending.items())]
        return logged + partials


def event(author: str, kind: str, texts: tuple[str, ...]) -> Event:
    parts = [TextPart(text=t) for t in texts]
    if kind == "status":
        return Event(author=author, kind="status", source="agent", parts=parts)
    return Event(author=author, kind="message", role="user" if author == "user" else "assistant", parts=parts)


def shown(e: Event) -> Shown:
    return (e.seq, e.author, e.kind, tuple(p.text for p in e.parts if isinstance(p, TextPart)), e.partial)


texts = st.lists(st.text(st.characters(codec="utf-8"), max_size=6), max_size=3).map(tuple)
prepares = st.builds(Prepare, st.sampled_from(AUTHORS), texts)
appends = st.builds(
    Append,
    st.lists(
        st.tuples(st.sampled_from(AUTHORS), st.sampled_from(["message", "status"]), texts), min_size=1, max_size=3
    ).map(tuple),
)
operations = st.lists(st.one_of(prepares, appends), max_size=12)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations, after_seq=st.integers(min_value=0, max_value=6))
async def test_interleavings_follow_the_model(store: SessionStore, ops: list[Prepare | Append], after_seq: int) -> None:
    session = await store.create()
    model = Model()
    for op in ops:
        if isinstance(op, Prepare):
            partial = await store.prepare_event(session.id, event(op.author, "message", op.texts))
            assert shown(partial)[1:] == (op.author, "message", model.prepare(op), True)
        else:
            stored = await store.append_events(session.id, [event(*e) for e in op.batch])
            assert [shown(e) for e in stored] == model.append(op)

    for view in ("prompt", "ui", "all"):
        assert [shown(e) for e in await store.events(session.id, view=view)] == model.view(view, 0)
        got = await store.events(session.id, view=view, after_seq=after_seq)
        assert [shown(e) for e in got] == model.view(view, after_seq)
    assert [shown(e) for e in (await store.get(session.id)).events] == model.view("ui", 0)
