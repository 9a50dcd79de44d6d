-- Scheduled snapshots (`--backup-dir`, services/backups.rs). One row: which process
-- takes them (a lease it renews while it runs, so that of several processes over one
-- store file exactly one does) and how the last one went, which every process's
-- dashboard and metrics read.
CREATE TABLE backup_schedule (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    holder TEXT,
    lease_until INTEGER NOT NULL DEFAULT 0,
    every_seconds INTEGER,
    last_attempt_at INTEGER,
    last_success_at INTEGER,
    last_file TEXT,
    last_failure_at INTEGER,
    last_error TEXT
);
INSERT INTO backup_schedule (id) VALUES (1);
