-- The account page: as ../sqlite/20261205000001_account_page.sql. The sessions table
-- is small (at most 10 live sessions a key, expired ones swept), so its index is built
-- in this transaction.
ALTER TABLE sessions ADD COLUMN passkey_id BIGINT;
ALTER TABLE sessions ADD COLUMN opened_by TEXT NOT NULL DEFAULT 'key'
    CHECK (opened_by IN ('key', 'passkey', 'code', 'sign_up'));
CREATE INDEX sessions_passkey ON sessions (passkey_id) WHERE passkey_id IS NOT NULL;

ALTER TABLE recovery_codes ADD COLUMN expires_at BIGINT;
