-- The account page (services/passkeys.rs).
--
-- Which passkey opened a browser session (NULL: an API key or a recovery code did),
-- so that removing a passkey ends the sessions it opened. No foreign key: the removal
-- deletes them in its own transaction.
ALTER TABLE sessions ADD COLUMN passkey_id INTEGER;
-- What opened it: 'key' (the API key's secret: the sessions before this release were
-- all so), 'passkey', 'code' (a recovery code or a staff link) or 'sign_up'. A session a
-- key opened may not change an account's passkeys or key once it has a passkey.
ALTER TABLE sessions ADD COLUMN opened_by TEXT NOT NULL DEFAULT 'key'
    CHECK (opened_by IN ('key', 'passkey', 'code', 'sign_up'));
CREATE INDEX sessions_passkey ON sessions (passkey_id) WHERE passkey_id IS NOT NULL;

-- A one-time sign-in link staff issue for an account is a recovery code that expires
-- (NULL: one of the account's own ten, which never do).
ALTER TABLE recovery_codes ADD COLUMN expires_at INTEGER;
