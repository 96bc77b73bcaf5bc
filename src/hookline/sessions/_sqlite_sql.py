"""The SQL of `SQLiteSessionStore`, each transaction in as few statements as it can take.

A whole transaction runs in one hop to the store's thread, but each statement still
costs a trip through the driver, so the statements fold the work together: the seq bump
returns the author's pending parts in the same statement (a subquery of its
`RETURNING`), and a read is one compound `SELECT`, which SQLite runs in one snapshot
with no `BEGIN` around it.
"""

from __future__ import annotations

from hookline.sessions._codec import check_view, event_json_sql
from hookline.types import View

__all__ = [
    "BUMP",
    "DELETE_SESSION",
    "INSERT_EVENT",
    "INSERT_SESSION",
    "LEASE_HELD",
    "LIST_SESSIONS",
    "READ_SESSION",
    "RELEASE_LEASE",
    "RENEW_LEASE",
    "SAVE_PENDING",
    "TAKE_LEASE",
    "TAKE_PENDING",
    "TOUCH",
    "UPDATE_STATE",
    "read_log",
]

_EVENT_JSON = event_json_sql(quote="json_quote({})", raw="{}", partial=False)
_PENDING_JSON = event_json_sql(quote="json_quote({})", raw="{}", partial=True)
_SESSION_COLUMNS = "id, app, user_id, state, created_at, updated_at"
_OWNED = "id = ? AND (? IS NULL OR user_id = ?)"

INSERT_SESSION = f"INSERT INTO hookline_sessions ({_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)"
READ_SESSION = f"SELECT {_SESSION_COLUMNS} FROM hookline_sessions WHERE {_OWNED}"
LIST_SESSIONS = (
    f"SELECT {_SESSION_COLUMNS} FROM hookline_sessions WHERE (? IS NULL OR app = ?)"
    " AND (? IS NULL OR user_id = ?) ORDER BY created_at DESC, id DESC"
)
DELETE_SESSION = f"DELETE FROM hookline_sessions WHERE {_OWNED} RETURNING id"
UPDATE_STATE = "UPDATE hookline_sessions SET state = ?, updated_at = ? WHERE id = ? RETURNING id"
# Reserve seqs and mark the session updated; return the new last seq and, as one JSON
# list, the pending parts of the authors whose events are appended (NULL: none pending).
# Its first parameter is the count, then updated_at, the session id, the id again, and
# the authors.
BUMP = (
    "UPDATE hookline_sessions SET last_seq = last_seq + ?, updated_at = ? WHERE id = ?"
    f" RETURNING last_seq, (SELECT '[' || group_concat({_PENDING_JSON}, ',') || ']' FROM hookline_pending"
    " WHERE session_id = ? AND author IN (SELECT value FROM json_each(?)))"
)
# The same for `prepare_event`: mark the session updated, return the author's pending parts.
TOUCH = (
    "UPDATE hookline_sessions SET updated_at = ? WHERE id = ?"
    f" RETURNING (SELECT {_PENDING_JSON} FROM hookline_pending WHERE session_id = ? AND author = ?)"
)
TAKE_PENDING = "DELETE FROM hookline_pending WHERE session_id = ? AND author IN (SELECT value FROM json_each(?))"
INSERT_EVENT = (
    "INSERT INTO hookline_events (session_id, seq, id, kind, author, role, source, created_at, parts, metadata)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
SAVE_PENDING = (
    "INSERT OR REPLACE INTO hookline_pending (session_id, author, id, kind, role, source, created_at, parts, metadata)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
# Take the lease if it is free: no row, or the holder's lease lapsed (the function
# `hookline_lapsed`, registered on the connection, also checks the holder's pid).
# Parameters: session id, owner, host, pid, expires_at, now. A row back: taken.
TAKE_LEASE = (
    "INSERT INTO hookline_run_locks (session_id, owner, host, pid, expires_at) VALUES (?, ?, ?, ?, ?)"
    " ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, host = excluded.host,"
    " pid = excluded.pid, expires_at = excluded.expires_at"
    " WHERE hookline_lapsed(host, pid, expires_at, ?) RETURNING owner"
)
RENEW_LEASE = "UPDATE hookline_run_locks SET expires_at = ? WHERE session_id = ? AND owner = ?"
RELEASE_LEASE = "DELETE FROM hookline_run_locks WHERE session_id = ? AND owner = ?"
# A row back: a live lease holds the session. Parameters: session id, now.
LEASE_HELD = (
    "SELECT owner FROM hookline_run_locks WHERE session_id = ? AND NOT hookline_lapsed(host, pid, expires_at, ?)"
)


_VIEW_KINDS = {"prompt": "AND kind = 'message'", "ui": "AND kind <> 'marker'", "all": ""}


def read_log(view: View, *, session: bool) -> str:
    """Return one `SELECT` of a session's row, then its events of `view`, then its pending parts.

    Each row is (tag, key, value...): tag 0 is the session's row (its columns when
    `session`, else none), tag 1 an event, tag 2 an author's pending parts (not in the
    `prompt` view), each with its JSON as value. Parameters: the session id, the user
    (twice; None: any), then the session id and `after_seq`, then the session id again
    unless the view is `prompt`. The rows come in key order: SQLite sorts integers
    before text, so the session (key -1), the events (key seq, from 1), then pending
    parts (key author); each part is read in its index's order, nothing is sorted.
    """
    prompt = check_view(view) == "prompt"
    columns = _SESSION_COLUMNS if session else "NULL"
    pad = ", NULL" * (_SESSION_COLUMNS.count(",") if session else 0)
    kinds = _VIEW_KINDS[view]
    parts = [
        f"SELECT 0, -1, {columns} FROM hookline_sessions WHERE {_OWNED}",
        f"SELECT 1, seq, {_EVENT_JSON}{pad} FROM hookline_events WHERE session_id = ? {kinds} AND seq > ?",
    ]
    if not prompt:
        parts.append(f"SELECT 2, author, {_PENDING_JSON}{pad} FROM hookline_pending WHERE session_id = ?")
    return " UNION ALL ".join(parts) + " ORDER BY 2"
