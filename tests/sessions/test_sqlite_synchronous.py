"""`SQLiteSessionStore(synchronous=...)`: NORMAL by default, FULL on request, nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookline import ConfigError, Event, TextPart
from hookline.sessions import SQLiteSessionStore
from hookline.sessions._sqlite_work import connect

_LEVELS = {"NORMAL": 1, "FULL": 2}  # what `PRAGMA synchronous` reads back


@pytest.mark.parametrize("value", ["OFF", "EXTRA", "", "fullest", 2])
def test_a_setting_the_store_does_not_offer_is_refused_with_the_choices(value: object, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="use one of: 'NORMAL', 'FULL'") as raised:
        SQLiteSessionStore(tmp_path / "s.db", synchronous=value)  # type: ignore[arg-type]
    assert isinstance(raised.value, ValueError)
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize(("given", "level"), [(None, "NORMAL"), ("full", "FULL"), ("NORMAL", "NORMAL")])
def test_the_connection_runs_with_the_setting_asked_for(given: str | None, level: str, tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db") if given is None else SQLiteSessionStore(
        tmp_path / "s.db", synchronous=given
    )
    assert store.synchronous == level
    db = connect(store.path, store.busy_timeout, store.synchronous)
    try:
        assert db.execute("PRAGMA synchronous").fetchone()[0] == _LEVELS[level]
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        db.close()


@pytest.mark.anyio
async def test_a_full_store_stores_and_reads_back(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "s.db", synchronous="FULL")
    try:
        await store.create(session_id="s")
        event = Event(author="user", kind="message", role="user", parts=[TextPart(text="hi")])
        stored = await store.append_events("s", [event])
        assert [e.text for e in await store.events("s")] == ["hi"]
        assert stored[0].seq == 1
    finally:
        await store.aclose()
