-- What the retention sweep (services/retention.rs) looks rows up by, so that each of
-- its small batches reads only the rows it deletes.
CREATE INDEX sessions_expiry ON sessions (expires_at);
CREATE INDEX idempotency_records_age ON idempotency_records (created_at);
CREATE INDEX rate_limit_usage_day ON rate_limit_usage (day_start);
