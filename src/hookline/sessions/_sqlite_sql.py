"""The SQL of `SQLiteSessionStore`: every statement it runs, by name, with named parameters.

Laid out as `_postgres_sql.py` is, section by section: the connection, migrations,
sessions, appends and prepared parts, reads, blobs, run locks. Parameters are named
(`:session_id`) and passed as a mapping, so a statement that uses one value twice names
it once (`INSERT_EVENT`, run once per event, takes a tuple); the parameters each statement
takes are listed beside it.

A whole transaction runs in one hop to the store's thread, but each statement still
costs a trip through the driver, so the statements fold the work together: the seq bump
tells in the same statement whether any parts are pending (a subquery of its
`RETURNING`), and a read is one compound `SELECT`, which SQLite runs in one snapshot
with no `BEGIN` around it.
"""

from __future__ import annotations

from hookline.sessions._codec import check_view, event_json_sql
from hookline.sessions._migrations import MIGRATIONS_TABLE
from hookline.types import View

__all__ = [
    "APPLIED_MIGRATIONS",
    "BEGIN",
    "BUMP",
    "BUMP_AND_SAVE_STATE",
    "CHECKPOINT",
    "COMMIT",
    "DELETE_SESSION",
    "INSERT_BLOB",
    "INSERT_EVENT",
    "INSERT_SESSION",
    "LEASE_HELD",
    "MIGRATIONS_TABLE_EXISTS",
    "READ_BLOBS",
    "READ_PENDING",
    "READ_SESSION",
    "RECORD_MIGRATION",
    "RELEASE_LEASE",
    "RENEW_LEASE",
    "ROLL_BACK",
    "ROLLBACK",
    "SAVE_PENDING",
    "SET_UP",
    "TAKE_LEASE",
    "TAKE_PENDING",
    "TOUCH",
    "UNHELD_BLOBS",
    "UPDATE_STATE",
    "list_sessions",
    "read_log",
    "read_page",
    "search",
]

_EVENT_JSON = event_json_sql(quote="json_quote({})", raw="{}", partial=False)
_PENDING_JSON = event_json_sql(quote="json_quote({})", raw="{}", partial=True)
_SESSION_COLUMNS = "id, app, user_id, state, created_at, updated_at"
_OWNED = "id = :session_id AND (:user IS NULL OR user_id = :user)"
_AUTHORS = "author IN (SELECT value FROM json_each(:authors))"  # :authors, a JSON list

# --- the connection and its transactions ---------------------------------------------------

# Run in order on every new connection.
SET_UP = ("PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON")
# A write takes SQLite's write lock before it reads what it will change.
BEGIN = "BEGIN IMMEDIATE"
COMMIT = "COMMIT"
ROLLBACK = "ROLLBACK"
CHECKPOINT = "PRAGMA wal_checkpoint(RESTART)"

# --- migrations ------------------------------------------------------------------------------

# :table
MIGRATIONS_TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :table"
APPLIED_MIGRATIONS = f"SELECT name FROM {MIGRATIONS_TABLE}"
# :name, :applied_at
RECORD_MIGRATION = f"INSERT INTO {MIGRATIONS_TABLE} (name, applied_at) VALUES (:name, :applied_at)"

# --- sessions --------------------------------------------------------------------------------

# :id, :app, :user_id, :state, :created_at, :updated_at
INSERT_SESSION = (
    f"INSERT INTO hookline_sessions ({_SESSION_COLUMNS})"
    " VALUES (:id, :app, :user_id, :state, :created_at, :updated_at)"
)
# :session_id, :user (None: any)
READ_SESSION = f"SELECT {_SESSION_COLUMNS} FROM hookline_sessions WHERE {_OWNED}"


def list_sessions(*, app: bool, user: bool) -> str:
    """Return the `SELECT` of the newest sessions of an app and a user, newest first.

    Parameters: `:limit` (None: every session), and `:app` and `:user` when `app` and `user`
    are true (else any app, any user). Only the owners asked for are compared, so that SQLite
    reads the sessions through their index (app, user, creation time) and stops at `:limit`.
    """
    owner = " AND ".join(["1", *(["app = :app"] if app else []), *(["user_id = :user"] if user else [])])
    return (f"SELECT {_SESSION_COLUMNS} FROM hookline_sessions WHERE {owner}"
            " ORDER BY created_at DESC, id DESC LIMIT coalesce(:limit, -1)")  # -1: no limit


# :session_id, :user (None: any); a row back: deleted
DELETE_SESSION = f"DELETE FROM hookline_sessions WHERE {_OWNED} RETURNING id"
# :session_id, :state, :updated_at; a row back: updated
UPDATE_STATE = (
    "UPDATE hookline_sessions SET state = :state, updated_at = :updated_at WHERE id = :session_id RETURNING id"
)

# --- appends and prepared parts --------------------------------------------------------------

# Reserve :count seqs and mark the session updated; return the new last seq and whether
# any author of the session has parts pending (rarely: then `TAKE_PENDING` takes them).
# :session_id, :count, :updated_at; no row back: no such session
_BUMP = (
    "UPDATE hookline_sessions SET last_seq = last_seq + :count, updated_at = :updated_at<STATE>"
    " WHERE id = :session_id RETURNING last_seq, EXISTS (SELECT 1 FROM hookline_pending WHERE session_id = :session_id)"
)
BUMP = _BUMP.replace("<STATE>", "")
# `BUMP` that also replaces the session's state (a run's last write): :state besides
BUMP_AND_SAVE_STATE = _BUMP.replace("<STATE>", ", state = :state")
# Delete the pending parts of :authors; return each as its partial event's JSON.
# :session_id, :authors
TAKE_PENDING = f"DELETE FROM hookline_pending WHERE session_id = :session_id AND {_AUTHORS} RETURNING {_PENDING_JSON}"
# The columns of `EventRow`, in order: the one statement run per event takes a tuple,
# which the driver binds without looking up ten names.
INSERT_EVENT = (
    "INSERT INTO hookline_events (session_id, seq, id, kind, author, role, source, created_at, parts, metadata)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# For `prepare_event`: mark the session updated, return the :author's pending parts (NULL: none).
# :session_id, :updated_at, :author; no row back: no such session
TOUCH = (
    "UPDATE hookline_sessions SET updated_at = :updated_at WHERE id = :session_id"
    f" RETURNING (SELECT {_PENDING_JSON} FROM hookline_pending WHERE session_id = :session_id AND author = :author)"
)
# The columns of `EventRow` but `seq`, by name
SAVE_PENDING = (
    "INSERT OR REPLACE INTO hookline_pending (session_id, author, id, kind, role, source, created_at, parts, metadata)"
    " VALUES (:session_id, :author, :id, :kind, :role, :source, :created_at, :parts, :metadata)"
)

# --- reads -----------------------------------------------------------------------------------

_VIEW_KINDS = {"prompt": "AND kind = 'message' AND rolled_back = 0", "ui": "AND kind <> 'marker'", "all": ""}


def read_log(view: View, *, session: bool) -> str:
    """Return one `SELECT` of a session's row, then its events of `view`, then its pending parts.

    Each row is (tag, key, value...): tag 0 is the session's row (its columns when
    `session`, else none), tag 1 an event, tag 2 an author's pending parts (not in the
    `prompt` view), each with its JSON as value. Parameters: `:session_id`, `:user`
    (None: any) and `:after_seq`. The rows come in key order: SQLite sorts integers
    before text, so the session (key -1), the events (key seq, from 1), then pending
    parts (key author); each part is read in its index's order, nothing is sorted.
    """
    prompt = check_view(view) == "prompt"
    columns = _SESSION_COLUMNS if session else "NULL"
    pad = ", NULL" * (_SESSION_COLUMNS.count(",") if session else 0)
    kinds = _VIEW_KINDS[view]
    parts = [
        f"SELECT 0, -1, {columns} FROM hookline_sessions WHERE {_OWNED}",
        f"SELECT 1, seq, {_EVENT_JSON}{pad} FROM hookline_events"
        f" WHERE session_id = :session_id {kinds} AND seq > :after_seq",
    ]
    if not prompt:
        parts.append(f"SELECT 2, author, {_PENDING_JSON}{pad} FROM hookline_pending WHERE session_id = :session_id")
    return " UNION ALL ".join(parts) + " ORDER BY 2"


def read_page(view: View, *, newest: bool) -> str:
    """Return the `SELECT` of a page of a session's events of `view`: `(seq, json)` rows, newest first with `newest`.

    Parameters: `:session_id`, `:after_seq`, `:before_seq` and `:limit`; the rows come in the
    order of the index on (session_id, seq), nothing else is sorted.
    """
    kinds, order = _VIEW_KINDS[check_view(view)], "DESC" if newest else "ASC"
    return (f"SELECT seq, {_EVENT_JSON} FROM hookline_events WHERE session_id = :session_id {kinds}"
            f" AND seq > :after_seq AND seq < :before_seq ORDER BY seq {order} LIMIT :limit")


# :session_id; every author's pending parts as JSON, by author
READ_PENDING = f"SELECT author, {_PENDING_JSON} FROM hookline_pending WHERE session_id = :session_id ORDER BY author"


# Mark the events of a rolled-back run: out of the prompt view, `"rolled_back": true` first in
# their metadata (a JSON object as `encode_event` writes it, so it starts with `{`).
# :session_id, :after_seq, :through_seq
ROLL_BACK = (
    "UPDATE hookline_events SET rolled_back = 1, metadata = CASE metadata WHEN '{}' THEN '{\"rolled_back\":true}'"
    " ELSE '{\"rolled_back\":true,' || substr(metadata, 2) END"
    " WHERE session_id = :session_id AND seq > :after_seq AND seq <= :through_seq AND rolled_back = 0"
)


# --- search: the sessions that mention a text ----------------------------------------------------

# A session's messages that may mention the needle: their raw `parts` hold its JSON form
# (`_search.py` says why that test passes every message that does). `hookline_holds`,
# registered on the connection, folds case as Python's `str.casefold`, which LIKE cannot
# (it folds ASCII letters only).
_MAY_MENTION = (
    "e.session_id = s.id AND e.kind = 'message' AND e.rolled_back = 0 AND hookline_holds(e.parts, :json_needle)"
)
# A message's parts, each a row: `\u0000` (NUL) first made U+FFFD, as SQLite's JSON functions
# cut a text at a NUL. Only the matching sees the change: the parts handed back are the stored ones.
_PARTS = "json_each(replace(e.parts, '\\u0000', '\\ufffd')) AS p"
# Each text of those messages: (seq, at, parts, text), `at` -1 for the message's text parts
# joined (group_concat takes them in json_each's order, the array's), else a tool result's index.
_TEXTS = (
    "SELECT e.seq AS seq, -1 AS at, e.parts AS parts, (SELECT group_concat(json_extract(p.value, '$.text'), '')"
    f" FROM {_PARTS} WHERE json_extract(p.value, '$.type') = 'text') AS text"
    f" FROM hookline_events AS e WHERE {_MAY_MENTION}"
    " UNION ALL SELECT e.seq, p.key, e.parts, json_extract(p.value, '$.content')"
    f" FROM hookline_events AS e, {_PARTS} WHERE {_MAY_MENTION}"
    " AND json_extract(p.value, '$.type') = 'tool_result'"
)


def search(*, app: bool, user: bool) -> str:
    """Return the `SELECT` of the sessions whose id or texts hold a needle, newest first.

    Parameters: `:needle` (casefolded, NUL as U+FFFD), `:json_needle` (its JSON form, casefolded), `:limit`,
    and `:app` and `:user` when `app` and `user` are true (else any app, any user). Given
    both, the sessions are read in the order of their index, and the search stops once
    `:limit` sessions mention the needle. Each row is the session's columns, then `hit`: the
    first text's index and its event's parts, as "<at> <parts JSON>" (one value, as a scalar
    subquery gives one), NULL when only the id holds the needle.
    """
    owner = " AND ".join(["1", *(["app = :app"] if app else []), *(["user_id = :user"] if user else [])])
    return (f"SELECT {_SESSION_COLUMNS}, hit FROM (SELECT {_SESSION_COLUMNS}, (SELECT t.at || ' ' || t.parts"
            f" FROM ({_TEXTS}) AS t WHERE hookline_holds(t.text, :needle) ORDER BY t.seq, t.at LIMIT 1) AS hit"
            f" FROM hookline_sessions AS s WHERE {owner})"
            " WHERE hit IS NOT NULL OR hookline_holds(id, :needle) ORDER BY created_at DESC, id DESC LIMIT :limit")


# --- blobs: the bytes of image and file parts, once per session and digest ---------------------

# Bytes the session holds already are left as they are (the first media type stays).
# :session_id, :digest, :media_type, :data
INSERT_BLOB = (
    "INSERT INTO hookline_blobs (session_id, digest, media_type, data)"
    " VALUES (:session_id, :digest, :media_type, :data) ON CONFLICT (session_id, digest) DO NOTHING"
)
# :session_id, :digests (a JSON list); a row per digest the session holds
READ_BLOBS = (
    "SELECT digest, media_type, data FROM hookline_blobs"
    " WHERE session_id = :session_id AND digest IN (SELECT value FROM json_each(:digests))"
)
# A write whose parts name bytes by digest alone (`blob`, no `data`) needs the session to hold them.
# :session_id, :digests (a JSON list); a row per digest the session does not hold, in the list's order
UNHELD_BLOBS = (
    "SELECT value FROM json_each(:digests) WHERE NOT EXISTS"
    " (SELECT 1 FROM hookline_blobs WHERE session_id = :session_id AND digest = value) ORDER BY key"
)

# --- run locks: a lease row per held session ---------------------------------------------------

# Take the lease if it is free: no row, or the holder's lease lapsed (the function
# `hookline_lapsed`, registered on the connection, also checks the holder's pid).
# :session_id, :owner, :host, :pid, :expires_at, :now; a row back: taken
TAKE_LEASE = (
    "INSERT INTO hookline_run_locks (session_id, owner, host, pid, expires_at)"
    " VALUES (:session_id, :owner, :host, :pid, :expires_at)"
    " ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, host = excluded.host,"
    " pid = excluded.pid, expires_at = excluded.expires_at"
    " WHERE hookline_lapsed(host, pid, expires_at, :now) RETURNING owner"
)
# :session_id, :owner, :expires_at
RENEW_LEASE = "UPDATE hookline_run_locks SET expires_at = :expires_at WHERE session_id = :session_id AND owner = :owner"
# :session_id, :owner
RELEASE_LEASE = "DELETE FROM hookline_run_locks WHERE session_id = :session_id AND owner = :owner"
# :session_id, :now; a row back: a live lease holds the session
LEASE_HELD = (
    "SELECT owner FROM hookline_run_locks"
    " WHERE session_id = :session_id AND NOT hookline_lapsed(host, pid, expires_at, :now)"
)
