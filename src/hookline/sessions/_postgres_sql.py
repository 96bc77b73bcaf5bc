"""The SQL of `PostgresSessionStore`: every statement it runs, by name.

Laid out as `_sqlite_sql.py` is, section by section: migrations, sessions, appends and
prepared parts, reads, blobs, run locks. asyncpg takes positional parameters only (`$1`, `$2`,
...), so each statement lists its parameters in order beside it, under the names the
SQLite statements give the same values (`:session_id` there is `$1 session_id` here).

Writes made under a run lock pass the lock's epoch as their `fence` parameter, and every
such statement checks it in its own transaction (`_FENCED`) and stamps the session with
it (`_STAMP`): see the store's module docstring for why the fence works. A write without
a lock passes NULL and is not fenced.
"""

from __future__ import annotations

from hookline.sessions._codec import check_view, event_json_sql
from hookline.sessions._migrations import MIGRATIONS_TABLE
from hookline.types import View

__all__ = [
    "APPEND_ALONE",
    "APPEND_ALONE_NOTIFY",
    "APPEND_HEAD",
    "APPEND_HEAD_NOTIFY",
    "APPLIED_MIGRATIONS",
    "CLAIM",
    "CREATE_SESSION",
    "DELETE_SESSION",
    "EVENTS_AFTER",
    "EVENTS_CHANNEL",
    "INSERT_BLOB",
    "INSERT_EVENT",
    "INSERT_SESSION",
    "LOCK_FOR_DELETE",
    "LOCK_HELD",
    "LOCK_MIGRATIONS",
    "MIGRATIONS_TABLE_EXISTS",
    "NOTIFY_MAX_ID",
    "OPEN_FOR_RUN",
    "READ_BLOBS",
    "READ_PENDING",
    "READ_PENDING_OF",
    "READ_SESSION",
    "RECORD_MIGRATION",
    "ROLL_BACK",
    "SAVE_PENDING",
    "SESSION_EXISTS",
    "TOUCH",
    "UNHELD_BLOBS",
    "UPDATE_STATE",
    "list_sessions",
    "read_events",
    "read_page",
    "search",
]

EVENTS_CHANNEL = "hookline_events"
"""The channel every append notifies at commit, with the payload `"<seq>:<session id>"`."""
NOTIFY_MAX_ID = 7_900
"""Bytes: a NOTIFY payload must stay under 8000; an append to a longer session id is not announced."""

_QUOTE = "coalesce(to_json({})::text, 'null')"
_EVENT_JSON = event_json_sql(quote=_QUOTE, raw="{}::text", partial=False)
_PENDING_JSON = event_json_sql(quote=_QUOTE, raw="{}::text", partial=True)
_SESSION_COLUMNS = "id, app, user_id, state, created_at, updated_at"
_OWNED = "id = $1 AND ($2::text IS NULL OR user_id = $2)"  # $1 session_id, $2 user (NULL: any)
# The fence of a write under a run lock: its epoch, as parameter ${0} (NULL: unfenced).
_FENCED = "AND (${0}::bigint IS NULL OR lock_epoch <= ${0}::bigint)"
_STAMP = "lock_epoch = greatest(lock_epoch, ${0}::bigint)"

# --- migrations ------------------------------------------------------------------------------

# $1 key1, $2 key2: the two-int advisory key that serialises migrations, for the transaction
LOCK_MIGRATIONS = "SELECT pg_advisory_xact_lock($1, $2)"
# $1 table; NULL back: it does not exist
MIGRATIONS_TABLE_EXISTS = "SELECT to_regclass($1)"
APPLIED_MIGRATIONS = f"SELECT name FROM {MIGRATIONS_TABLE}"
# $1 name, $2 applied_at
RECORD_MIGRATION = f"INSERT INTO {MIGRATIONS_TABLE} (name, applied_at) VALUES ($1, $2)"

# --- sessions --------------------------------------------------------------------------------

# $1 id, $2 app, $3 user_id, $4 state, $5 created_at, $6 updated_at, $7 fence
INSERT_SESSION = (
    f"INSERT INTO hookline_sessions ({_SESSION_COLUMNS}, lock_epoch) VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, 0))"
)
# `INSERT_SESSION` that leaves a session created meanwhile as it is (no error, nothing written)
CREATE_SESSION = INSERT_SESSION + " ON CONFLICT (id) DO NOTHING"
# $1 session_id, $2 user (NULL: any)
READ_SESSION = f"SELECT {_SESSION_COLUMNS} FROM hookline_sessions WHERE {_OWNED}"
# $1 session_id, $2 user (NULL: any); a row back: it exists
SESSION_EXISTS = f"SELECT 1 FROM hookline_sessions WHERE {_OWNED}"


def list_sessions(*, app: bool, user: bool) -> str:
    """Return the `SELECT` of the newest sessions of an app and a user, newest first.

    Parameters: `$1 app`, `$2 user` (each compared only when `app`, `user` are true: else any),
    `$3 limit` (NULL: every session). Only the owners asked for are compared, so that the planner
    reads the sessions through their index (app, user, creation time) and stops at `$3`.
    """
    owner = f"{'app = $1' if app else '$1::text IS NULL'} AND {'user_id = $2' if user else '$2::text IS NULL'}"
    return (f"SELECT {_SESSION_COLUMNS} FROM hookline_sessions WHERE {owner}"
            ' ORDER BY created_at DESC, id COLLATE "C" DESC LIMIT $3')


# $1 session_id, $2 user (NULL: any); a row back: deleted
DELETE_SESSION = f"DELETE FROM hookline_sessions WHERE {_OWNED} RETURNING id"
# $1 session_id, $2 state, $3 updated_at, $4 fence; a row back: updated
UPDATE_STATE = (
    f"UPDATE hookline_sessions SET state = $2, updated_at = $3, {_STAMP.format(4)}"
    f" WHERE id = $1 {_FENCED.format(4)} RETURNING id"
)

# --- appends and prepared parts --------------------------------------------------------------

# Reserve $2 count seqs, mark the session updated, and take the pending parts of the
# appended events' $4 authors. Returns the new last seq, and each author's pending parts
# as JSON (NULL: none). $1 session_id, $2 count, $3 updated_at, $4 authors, $5 fence;
# no row back: no such session, or fenced out.
APPEND_HEAD = f"""
    WITH s AS (UPDATE hookline_sessions SET last_seq = last_seq + $2, updated_at = $3, {_STAMP.format(5)}
               WHERE id = $1 {_FENCED.format(5)} RETURNING last_seq),
         p AS (DELETE FROM hookline_pending WHERE session_id = $1 AND author = ANY($4::text[])
               RETURNING {_PENDING_JSON} AS j)"""
# With `n`, the append announces itself: PostgreSQL sends the notification when (and only
# when) the transaction commits, and sends none when the fence let nothing through.
APPEND_HEAD_NOTIFY = (
    APPEND_HEAD + f",\n         n AS (SELECT pg_notify('{EVENTS_CHANNEL}', s.last_seq::text || ':' || $1) FROM s)"
    "\n    SELECT s.last_seq, p.j FROM s LEFT JOIN p ON true CROSS JOIN n"
)
APPEND_HEAD += "\n    SELECT s.last_seq, p.j FROM s LEFT JOIN p ON true"
# The whole append in one statement, when it takes no prepared parts (none of its authors
# has any; then it writes nothing and returns no row, and the store takes the transaction
# of `APPEND_HEAD`): reserve the seqs, save the state unless $6 is NULL, insert the events
# (one array per column, in order) and announce the append. $1 session_id, $2 count,
# $3 updated_at, $4 authors, $5 fence, $6 state, $7 ids, $8 kinds, $9 authors of the
# events, $10 roles, $11 sources, $12 parts, $13 metadata; the new last seq back.
APPEND_ALONE = f"""
    WITH s AS (UPDATE hookline_sessions SET last_seq = last_seq + $2, updated_at = $3,
                      state = coalesce($6::json, state), {_STAMP.format(5)}
               WHERE id = $1 {_FENCED.format(5)} AND NOT EXISTS
                     (SELECT 1 FROM hookline_pending WHERE session_id = $1 AND author = ANY($4::text[]))
               RETURNING last_seq),
         i AS (INSERT INTO hookline_events
                      (session_id, seq, id, kind, author, role, source, created_at, parts, metadata)
               SELECT $1, s.last_seq - $2 + e.n, e.id, e.kind, e.author, e.role, e.source, $3, e.parts::json,
                      e.metadata::json
               FROM s, unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
                              $13::text[]) WITH ORDINALITY AS e (id, kind, author, role, source, parts, metadata, n))"""
APPEND_ALONE_NOTIFY = (
    APPEND_ALONE + f",\n         n AS (SELECT pg_notify('{EVENTS_CHANNEL}', s.last_seq::text || ':' || $1) FROM s)"
    "\n    SELECT s.last_seq FROM s CROSS JOIN n"
)
APPEND_ALONE += "\n    SELECT s.last_seq FROM s"
# The columns of `EventRow`, in order: $1 session_id, $2 seq, $3 id, $4 kind, $5 author,
# $6 role, $7 source, $8 created_at, $9 parts, $10 metadata
INSERT_EVENT = (
    "INSERT INTO hookline_events (session_id, seq, id, kind, author, role, source, created_at, parts, metadata)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
)
# For `prepare_event`: lock the session row (ordering this after any append or prepare in
# flight) and mark it updated. $1 session_id, $2 updated_at, $3 fence; no row back: no
# such session, or fenced out.
TOUCH = (
    f"UPDATE hookline_sessions SET updated_at = $2, {_STAMP.format(3)} WHERE id = $1 {_FENCED.format(3)} RETURNING id"
)
# $1 session_id, $2 author; the author's pending parts as JSON, or no row
READ_PENDING_OF = f"SELECT {_PENDING_JSON} FROM hookline_pending WHERE session_id = $1 AND author = $2"
# $1 session_id, $2 author, $3 id, $4 kind, $5 role, $6 source, $7 created_at, $8 parts, $9 metadata
SAVE_PENDING = """
    INSERT INTO hookline_pending (session_id, author, id, kind, role, source, created_at, parts, metadata)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
    ON CONFLICT (session_id, author) DO UPDATE SET kind = EXCLUDED.kind, role = EXCLUDED.role,
        source = EXCLUDED.source, parts = EXCLUDED.parts, metadata = EXCLUDED.metadata"""

# --- reads -----------------------------------------------------------------------------------

_VIEW_KINDS = {"prompt": "AND kind = 'message' AND NOT rolled_back", "ui": "AND kind <> 'marker'", "all": ""}


def read_events(view: View) -> str:
    """Return the `SELECT` of a session's stored events of `view` above a seq, as JSON, in order.

    Parameters: `$1 session_id`, `$2 after_seq`. The pending parts (`READ_PENDING`) come
    after them in every view but `prompt`.
    """
    kinds = _VIEW_KINDS[check_view(view)]
    return f"SELECT {_EVENT_JSON} FROM hookline_events WHERE session_id = $1 {kinds} AND seq > $2 ORDER BY seq"


def read_page(view: View, *, newest: bool) -> str:
    """Return the `SELECT` of a page of a session's stored events of `view`, newest first with `newest`.

    One statement, so one round trip and one snapshot. Parameters: `$1 session_id`,
    `$2 after_seq`, `$3 before_seq` (None: no end), `$4 limit`, `$5` whether the pending parts
    come too. Rows `(k, seq, author, json)`, by `k`: 0 the session's (none: no such session),
    1 the events, 2 each author's pending parts.
    """
    kinds, order = _VIEW_KINDS[check_view(view)], "DESC" if newest else "ASC"
    return f"""
    SELECT 0 AS k, NULL::bigint AS seq, NULL::text COLLATE "C" AS author, NULL::text AS j
    FROM hookline_sessions WHERE id = $1
    UNION ALL
    (SELECT 1, seq, NULL, {_EVENT_JSON} FROM hookline_events WHERE session_id = $1 {kinds} AND seq > $2
     AND ($3::bigint IS NULL OR seq < $3) ORDER BY seq {order} LIMIT $4)
    UNION ALL
    SELECT 2, NULL, author COLLATE "C", {_PENDING_JSON} FROM hookline_pending WHERE session_id = $1 AND $5
    ORDER BY k, seq {order}, author"""


# A run's first read in one statement: the session's row (key -1, its columns), then its
# events in the `prompt` view (key seq, each as JSON, in the second column); no session
# row back: no such session of $2. $1 session_id, $2 user (NULL: any)
OPEN_FOR_RUN = f"""
    SELECT -1 AS k, NULL AS j, id, app, user_id, state::text, created_at, updated_at FROM hookline_sessions
    WHERE {_OWNED}
    UNION ALL
    SELECT seq, {_EVENT_JSON}, NULL, NULL, NULL, NULL, NULL, NULL FROM hookline_events
    WHERE session_id = $1 AND kind = 'message' AND NOT rolled_back
    ORDER BY k"""
# $1 session_id; every author's pending parts as JSON, by author
READ_PENDING = f'SELECT {_PENDING_JSON} FROM hookline_pending WHERE session_id = $1 ORDER BY author COLLATE "C"'
# $1 session_id, $2 after_seq: the events of every kind, as JSON, in order (what a follower reads)
EVENTS_AFTER = read_events("all")

# Mark the events of a rolled-back run (see `_sqlite_sql.ROLL_BACK`); the number marked back.
# $1 session_id, $2 after_seq, $3 through_seq
ROLL_BACK = """
    WITH r AS (UPDATE hookline_events SET rolled_back = true, metadata = (CASE metadata::text WHEN '{}'
                      THEN '{"rolled_back":true}' ELSE '{"rolled_back":true,' || substr(metadata::text, 2) END)::json
               WHERE session_id = $1 AND seq > $2 AND seq <= $3 AND NOT rolled_back RETURNING 1)
    SELECT count(*) FROM r"""


# --- search: the sessions that mention a text ----------------------------------------------------

# A message's parts, parsed: `\u0000` (NUL) first made U+FFFD, as PostgreSQL refuses to take
# apart JSON holding it (its text type cannot hold NUL). Only the matching sees the change:
# the parts handed back are the stored ones.
_PARTS = "json_array_elements(replace(e.parts::text, '\\u0000', '\\ufffd')::json) WITH ORDINALITY AS p(value, at)"
# Each text of a message: (at, text), `at` -1 for its text parts joined, else a tool result's index.
_TEXTS = (
    f"SELECT -1 AS at, string_agg(p.value ->> 'text', '' ORDER BY p.at) AS text FROM {_PARTS}"
    " WHERE p.value ->> 'type' = 'text'"
    f" UNION ALL SELECT p.at - 1, p.value ->> 'content' FROM {_PARTS} WHERE p.value ->> 'type' = 'tool_result'"
)
# The first text of session `s` that holds the needle, as "<at> <parts JSON>" (one value, as a
# scalar subquery gives one). Only the messages whose raw parts hold the needle's JSON form
# are taken apart (`_search.py` says why that test passes every message that does).
_HIT = (
    f"SELECT t.at || ' ' || e.parts::text FROM hookline_events AS e CROSS JOIN LATERAL ({_TEXTS}) AS t"
    " WHERE e.session_id = s.id AND e.kind = 'message' AND NOT e.rolled_back AND e.parts::text ILIKE $2 ESCAPE '\\'"
    " AND t.text ILIKE $1 ESCAPE '\\' ORDER BY e.seq, t.at LIMIT 1"
)


def search(*, app: bool, user: bool) -> str:
    """Return the `SELECT` of the sessions whose id or texts hold a needle, newest first.

    Parameters: `$1` the needle's `LIKE` pattern (NUL as U+FFFD), `$2` its JSON form's, `$3 limit`, `$4 app`,
    `$5 user` (each compared only when `app`, `user` are true: else any). The sessions are
    sorted first (a cheap sort, without their texts), then searched in that order until `$3`
    of them mention the needle. Each row is the session's columns, then `hit` (see `_HIT`),
    NULL when only the id holds the needle.
    """
    owner = f"{'app = $4' if app else '$4::text IS NULL'} AND {'user_id = $5' if user else '$5::text IS NULL'}"
    newest = 'ORDER BY created_at DESC, id COLLATE "C" DESC'
    return (f"SELECT {_SESSION_COLUMNS}, hit FROM (SELECT {_SESSION_COLUMNS}, ({_HIT}) AS hit FROM"
            f" (SELECT {_SESSION_COLUMNS} FROM hookline_sessions WHERE {owner} {newest}) AS s) AS found"
            f" WHERE hit IS NOT NULL OR id ILIKE $1 ESCAPE '\\' {newest} LIMIT $3")


# --- blobs: the bytes of image and file parts, once per session and digest ---------------------

# Bytes the session holds already are left as they are (the first media type stays).
# $1 session_id, $2 digest, $3 media_type, $4 data
INSERT_BLOB = (
    "INSERT INTO hookline_blobs (session_id, digest, media_type, data)"
    " VALUES ($1, $2, $3, $4) ON CONFLICT (session_id, digest) DO NOTHING"
)
# $1 session_id, $2 digests; a row per digest the session holds
READ_BLOBS = (
    "SELECT digest, media_type, data FROM hookline_blobs"
    " WHERE session_id = $1 AND digest = ANY($2::text[])"
)
# A write whose parts name bytes by digest alone (`blob`, no `data`) needs the session to hold them.
# $1 session_id, $2 digests; a row per digest the session does not hold, in the list's order
UNHELD_BLOBS = (
    "SELECT d.digest FROM unnest($2::text[]) WITH ORDINALITY AS d (digest, n) WHERE NOT EXISTS"
    " (SELECT 1 FROM hookline_blobs b WHERE b.session_id = $1 AND b.digest = d.digest) ORDER BY d.n"
)

# --- run locks: a session-level advisory lock per held session ----------------------------------

# $1 key: the run lock, for this transaction only; true back: taken (no run holds it)
LOCK_FOR_DELETE = "SELECT pg_try_advisory_xact_lock($1)"
# A new holder's stamp: waits for the row lock of any write in flight, then fences it out.
# $1 session_id; the new epoch back
CLAIM = """
    WITH e AS (SELECT nextval('hookline_lock_epochs') AS epoch),
         s AS (UPDATE hookline_sessions SET lock_epoch = (SELECT epoch FROM e) WHERE id = $1)
    SELECT epoch FROM e"""
# Whether the advisory lock of `run_lock` (one bigint key, split in two oids) is granted.
# $1 key's high 32 bits, $2 its low 32 bits
LOCK_HELD = """
    SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
                   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                   AND classid = $1::bigint::oid AND objid = $2::bigint::oid)"""
