-- Which passkey opened a browser session: as ../sqlite/20261205000001_session_passkey.sql.
-- The sessions table is small (at most 10 live sessions a key, expired ones swept),
-- so its index is built in this transaction.
ALTER TABLE sessions ADD COLUMN passkey_id BIGINT;
CREATE INDEX sessions_passkey ON sessions (passkey_id) WHERE passkey_id IS NOT NULL;
