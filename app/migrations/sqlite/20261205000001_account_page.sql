-- The account page (services/passkeys.rs).
--
-- Which passkey opened a browser session (NULL: an API key or a recovery code did),
-- so that removing a passkey ends the sessions it opened. No foreign key: the removal
-- deletes them in its own transaction.
ALTER TABLE sessions ADD COLUMN passkey_id INTEGER;
CREATE INDEX sessions_passkey ON sessions (passkey_id) WHERE passkey_id IS NOT NULL;

-- A one-time sign-in link staff issue for an account is a recovery code that expires
-- (NULL: one of the account's own ten, which never do).
ALTER TABLE recovery_codes ADD COLUMN expires_at INTEGER;
