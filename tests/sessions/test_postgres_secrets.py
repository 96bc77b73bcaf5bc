"""No error from the PostgreSQL store carries its DSN or password (issue 10, item 9).

Each failure is provoked for real (a closed port, an unknown role, a missing database, a
bad option); the password must appear nowhere a user or a log could read it: `str`,
`repr`, the formatted traceback with its whole chain of causes, nor the server's answer.
"""

from __future__ import annotations

import traceback

import pytest

from hookline.errors import ConfigError, HooklineError, StoreError
from hookline.server.errors import error_body
from hookline.sessions import PostgresSessionStore

pytestmark = pytest.mark.anyio

PASSWORD = "s3cret-Pa55"


def everything_said(exc: BaseException) -> str:
    """All a user or a log could read of `exc`: its words, its repr, its formatted chain."""
    chain = []
    seen: BaseException | None = exc
    while seen is not None:  # the raw chain too, beyond what tracebacks print
        chain.append(f"{seen!s} {seen!r} {seen.args!r}")
        seen = seen.__cause__ if seen.__cause__ is not None or seen.__suppress_context__ else seen.__context__
    formatted = "".join(traceback.format_exception(exc))
    return "\n".join([*chain, formatted, error_body(exc)[1].model_dump_json()])


@pytest.mark.parametrize(
    ("dsn", "kind", "says"),
    [
        (f"postgresql://test:{PASSWORD}@127.0.0.1:9/nodb", StoreError, "cannot reach PostgreSQL database 127.0.0.1:9/"),
        (f"postgresql://nobody_here:{PASSWORD}@127.0.0.1:5432/nodb", StoreError, "127.0.0.1:5432/nodb failed"),
        (f"postgresql://postgres:{PASSWORD}@127.0.0.1:5432/no_such_db", StoreError, 'database "no_such_db"'),
        (f"postgresql://postgres:{PASSWORD}@127.0.0.1:5432/db?sslmode={PASSWORD}", ConfigError, "sslmode"),
        (f"postgresql://postgres:{PASSWORD}@127.0.0.1:notaport/db", ConfigError, "invalid PostgreSQL DSN"),
        (f"postgresql://u:{PASSWORD}@127.0.0.1:9/db?password={PASSWORD}x", StoreError, "127.0.0.1:9/db"),
    ],
)
async def test_a_failing_database_never_shows_the_password(dsn: str, kind: type[HooklineError], says: str) -> None:
    store = PostgresSessionStore(dsn)
    assert PASSWORD not in repr(store)
    with pytest.raises(kind, match=says) as caught:
        await store.list()
    said = everything_said(caught.value)
    assert PASSWORD not in said
    assert dsn not in said
    if isinstance(caught.value, StoreError):
        assert caught.value.where == store.where
        assert "@" not in store.where
    await store.aclose()


async def test_the_run_lock_fails_as_cleanly() -> None:
    store = PostgresSessionStore(f"postgresql://test:{PASSWORD}@127.0.0.1:9/nodb")
    with pytest.raises(StoreError) as caught:
        async with store.run_lock("s"):
            pass
    assert PASSWORD not in everything_said(caught.value)


@pytest.mark.parametrize(
    ("dsn", "says"),
    [
        (f"host=127.0.0.1 password={PASSWORD}", "must start with postgresql://, not no scheme://"),
        (f"mysql://u:{PASSWORD}@127.0.0.1/db", "must start with postgresql://, not mysql://"),
        (f"postgresql://u:{PASSWORD}@[::1/db", "not a URL"),
    ],
)
def test_a_dsn_that_is_not_a_postgresql_url_is_refused_at_once(dsn: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        PostgresSessionStore(dsn)
    assert PASSWORD not in everything_said(caught.value)


def test_where_names_host_port_and_database_only() -> None:
    assert PostgresSessionStore(f"postgresql://me:{PASSWORD}@db.example:6543/app").where == "db.example:6543/app"
    assert PostgresSessionStore("postgresql://me@h1:1,h2:2/app?sslmode=require").where == "h1:1,h2:2/app"
    assert PostgresSessionStore("postgresql:///app?host=/run/postgresql").where == "/run/postgresql/app"
    assert PostgresSessionStore("postgres://me:pw@localhost").where == "localhost"
