-- Events (contract.md, "Events"): the outbox, and the webhook endpoints and deliveries
-- that carry it out of the store.
--
-- An event is written by the transaction whose change it reports, so a change that
-- commits has its events and one rolled back has none. Its `seq` is handed out in that
-- transaction, and writers take turns (SQLite has one writer; on PostgreSQL every
-- write holds the store's lock), so `seq` is also the order the changes committed in:
-- streams resume after a `seq`, and webhook deliveries are made for events after the
-- last one handed out (webhook_fanout).

CREATE TABLE events (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    -- `evt_` and 24 hex digits: the envelope's `id`, a webhook's `webhook-id`, a
    -- stream's `id:`.
    id           TEXT    NOT NULL UNIQUE,
    type         TEXT    NOT NULL,
    -- Unix milliseconds.
    created_at   INTEGER NOT NULL,
    -- The resource as the REST API shows it, JSON.
    data         TEXT    NOT NULL,
    -- Who a key's stream shows it to: everyone (NULL), or only this key (its order) and
    -- admins.
    owner_key_id INTEGER,
    -- Shown to admins only (a key revoked).
    admin_only   INTEGER NOT NULL DEFAULT 0 CHECK (admin_only IN (0, 1))
);
CREATE INDEX events_age ON events (created_at);

-- Endpoints that take events over HTTP, signed with their secret.
CREATE TABLE webhooks (
    id                    INTEGER PRIMARY KEY AUTOINCREMENT,
    url                   TEXT    NOT NULL,
    -- The event types it takes, space-separated, or `*` for all.
    events                TEXT    NOT NULL,
    description           TEXT,
    enabled               INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    -- `whsec_` and the key in base64.
    secret                TEXT    NOT NULL,
    -- The secret before the last rotation, which signs too until `previous_until`.
    previous_secret       TEXT,
    previous_until        INTEGER,
    created_at            INTEGER NOT NULL,
    -- Since when every attempt failed (NULL after a success); three days of it
    -- disable the endpoint.
    failing_since         INTEGER,
    -- Why it was disabled by the store itself (NULL when staff chose).
    disabled_reason       TEXT
);

-- Each attempt to send an event to an endpoint: made (`succeeded` or `failed`, with
-- what came back) or still to make (`pending`, due at `due_at`). A failed attempt that
-- will be retried is followed by the pending one that retries it.
CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id      INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_seq       INTEGER NOT NULL REFERENCES events (seq) ON DELETE CASCADE,
    attempt         INTEGER NOT NULL CHECK (attempt >= 1),
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    created_at      INTEGER NOT NULL,
    -- Pending: when it is to be made. Failed and retried: when the retry is due.
    due_at          INTEGER,
    -- A server making it holds it until then (another takes it over after).
    claimed_until   INTEGER,
    attempted_at    INTEGER,
    response_status INTEGER,
    duration_ms     INTEGER,
    error           TEXT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (due_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_seq);

-- The last event whose deliveries were made out (one row).
CREATE TABLE webhook_fanout (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    last_seq INTEGER NOT NULL
);
INSERT INTO webhook_fanout (id, last_seq) VALUES (1, 0);
