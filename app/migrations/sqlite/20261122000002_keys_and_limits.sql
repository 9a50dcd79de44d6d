-- API keys, browser sessions and rate-limit state (contract.md, "Authentication"
-- and "Limits"). Times are Unix seconds (UTC).

-- A key is `psk_<prefix>_<secret>`; the prefix is stored to find the row, the whole
-- key only as a SHA-256 hash (keys carry 128 random bits: no slow hash needed).
CREATE TABLE api_keys (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    prefix      TEXT    NOT NULL UNIQUE,
    key_hash    BLOB    NOT NULL,
    name        TEXT    NOT NULL,
    role        TEXT    NOT NULL CHECK (role IN ('customer', 'admin')),
    plan        TEXT    NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'enterprise')),
    per_minute  INTEGER NOT NULL CHECK (per_minute > 0),
    per_day     INTEGER NOT NULL CHECK (per_day > 0),
    created_at  INTEGER NOT NULL,
    revoked_at  INTEGER
);

-- A signed-in browser: the cookie holds a random token, this table its hash.
CREATE TABLE sessions (
    token_hash  BLOB    PRIMARY KEY,
    key_id      INTEGER NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
CREATE INDEX sessions_key ON sessions (key_id);

-- The in-memory rate limiter's counters, written back every second, so that a
-- restart neither resets a day's usage nor lifts a ban.
CREATE TABLE rate_limit_usage (
    subject          TEXT    PRIMARY KEY,  -- 'key:<id>' or 'ip:<address>'
    minute_start     INTEGER NOT NULL,
    minute_count     INTEGER NOT NULL,
    day_start        INTEGER NOT NULL,
    day_count        INTEGER NOT NULL,
    refusals         INTEGER NOT NULL,
    refusals_until   INTEGER NOT NULL,     -- end of the window the refusals were in
    banned_until     INTEGER NOT NULL
);
