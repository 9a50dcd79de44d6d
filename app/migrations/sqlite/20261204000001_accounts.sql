-- Shoppers' accounts, signed in with passkeys (WebAuthn; services/passkeys.rs). An
-- account owns exactly one customer key, made with it: limits, bans, idempotency,
-- orders and events stay that key's, as for any key.
CREATE TABLE accounts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    key_id      INTEGER NOT NULL UNIQUE REFERENCES api_keys (id),
    -- The WebAuthn user handle: 16 random bytes, which the passkey hands back when it
    -- signs in (so it names the account without a user name).
    user_handle BLOB    NOT NULL UNIQUE,
    created_at  INTEGER NOT NULL
);

-- An account's passkeys: webauthn-rs's record of each (its public key, algorithm and
-- signature counter) as JSON, found by the credential id the browser presents.
CREATE TABLE passkeys (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id    INTEGER NOT NULL REFERENCES accounts (id),
    credential_id BLOB    NOT NULL UNIQUE,
    passkey       TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    last_used_at  INTEGER
);
CREATE INDEX passkeys_account ON passkeys (account_id);

-- One-time recovery codes (shown once, at sign-up), stored as their SHA-256 only.
CREATE TABLE recovery_codes (
    code_hash  BLOB    PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    used_at    INTEGER
);
CREATE INDEX recovery_codes_account ON recovery_codes (account_id);

-- A ceremony between its two halves: webauthn-rs's state (the challenge) as JSON,
-- under the hash of a token the browser holds. Kept in the database, not in one
-- server's memory, so that the second half may reach another server; taken (deleted)
-- by the first attempt to finish it, so each challenge is answered at most once.
CREATE TABLE passkey_ceremonies (
    token_hash BLOB    PRIMARY KEY,
    kind       TEXT    NOT NULL CHECK (kind IN ('sign_up', 'sign_in', 'add')),
    state      TEXT    NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies (expires_at);
