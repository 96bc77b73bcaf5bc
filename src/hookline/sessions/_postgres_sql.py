"""The SQL of `PostgresSessionStore`: named statements with positional parameters.

Writes made under a run lock pass the lock's epoch, and every such statement checks it in
its own transaction (`FENCED`) and stamps the session with it (`STAMP`): see the store's
module docstring for why the fence works.
"""

from __future__ import annotations

from hookline.sessions._codec import event_json_sql

EVENTS_CHANNEL = "hookline_events"
"""The channel every append notifies at commit, with the payload `"<seq>:<session id>"`."""

__all__ = [
    "APPEND_HEAD",
    "APPEND_HEAD_NOTIFY",
    "CLAIM",
    "EVENTS_AFTER",
    "EVENTS_CHANNEL",
    "EVENT_JSON",
    "FENCED",
    "INSERT_EVENT",
    "INSERT_SESSION",
    "LOCK_HELD",
    "NOTIFY_MAX_ID",
    "PENDING_JSON",
    "QUOTE",
    "SAVE_PENDING",
    "SESSION_COLUMNS",
    "SET_STATE",
    "STAMP",
    "TOUCH",
    "VIEW_KINDS",
]

QUOTE = "coalesce(to_json({})::text, 'null')"
EVENT_JSON = event_json_sql(quote=QUOTE, raw="{}::text", partial=False)
PENDING_JSON = event_json_sql(quote=QUOTE, raw="{}::text", partial=True)
SESSION_COLUMNS = "id, app, user_id, state, created_at, updated_at"
INSERT_SESSION = (
    f"INSERT INTO hookline_sessions ({SESSION_COLUMNS}, lock_epoch) VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, 0))"
)
INSERT_EVENT = (
    "INSERT INTO hookline_events (session_id, seq, id, kind, author, role, source, created_at, parts, metadata)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
)
# A write under a run lock passes its epoch as $fence; one without passes NULL (unfenced).
FENCED = "AND (${0}::bigint IS NULL OR lock_epoch <= ${0}::bigint)"
STAMP = "lock_epoch = greatest(lock_epoch, ${0}::bigint)"
APPEND_HEAD = f"""
    WITH s AS (UPDATE hookline_sessions SET last_seq = last_seq + $2, updated_at = $3, {STAMP.format(5)}
               WHERE id = $1 {FENCED.format(5)} RETURNING last_seq),
         p AS (DELETE FROM hookline_pending WHERE session_id = $1 AND author = ANY($4::text[])
               RETURNING {PENDING_JSON} AS j)"""
# With `n`, the append announces itself: PostgreSQL sends the notification when (and only
# when) the transaction commits, and sends none when the fence let nothing through.
APPEND_HEAD_NOTIFY = (
    APPEND_HEAD + f",\n         n AS (SELECT pg_notify('{EVENTS_CHANNEL}', s.last_seq::text || ':' || $1) FROM s)"
    "\n    SELECT s.last_seq, p.j FROM s LEFT JOIN p ON true CROSS JOIN n"
)
APPEND_HEAD += "\n    SELECT s.last_seq, p.j FROM s LEFT JOIN p ON true"
EVENTS_AFTER = f"SELECT {EVENT_JSON} FROM hookline_events WHERE session_id = $1 AND seq > $2 ORDER BY seq"
NOTIFY_MAX_ID = 7_900  # bytes: a NOTIFY payload must stay under 8000; longer ids are not announced
# A run lock is held: the advisory lock of `run_lock` (one bigint key, split in two oids), granted.
LOCK_HELD = """
    SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
                   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                   AND classid = $1::bigint::oid AND objid = $2::bigint::oid)"""
TOUCH = (
    f"UPDATE hookline_sessions SET updated_at = $2, {STAMP.format(3)} WHERE id = $1 {FENCED.format(3)} RETURNING id"
)
SET_STATE = (
    f"UPDATE hookline_sessions SET state = $2, updated_at = $3, {STAMP.format(4)}"
    f" WHERE id = $1 {FENCED.format(4)} RETURNING id"
)
SAVE_PENDING = """
    INSERT INTO hookline_pending (session_id, author, id, kind, role, source, created_at, parts, metadata)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
    ON CONFLICT (session_id, author) DO UPDATE SET kind = EXCLUDED.kind, role = EXCLUDED.role,
        source = EXCLUDED.source, parts = EXCLUDED.parts, metadata = EXCLUDED.metadata"""
# A new holder's stamp: waits for the row lock of any write in flight, then fences it out.
CLAIM = """
    WITH e AS (SELECT nextval('hookline_lock_epochs') AS epoch),
         s AS (UPDATE hookline_sessions SET lock_epoch = (SELECT epoch FROM e) WHERE id = $1)
    SELECT epoch FROM e"""
VIEW_KINDS = {"prompt": "AND kind = 'message'", "ui": "AND kind <> 'marker'", "all": ""}
