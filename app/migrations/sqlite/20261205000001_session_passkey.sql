-- Which passkey opened a browser session (NULL: an API key or a recovery code did),
-- so that removing a passkey ends the sessions it opened (services/passkeys.rs). No
-- foreign key: the removal deletes them in its own transaction.
ALTER TABLE sessions ADD COLUMN passkey_id INTEGER;
CREATE INDEX sessions_passkey ON sessions (passkey_id) WHERE passkey_id IS NOT NULL;
