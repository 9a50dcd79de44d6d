-- One row the server rewrites to learn whether it can write again after a storage
-- fault (a full disk), while its readiness probe says it cannot (db/health.rs).
CREATE TABLE write_probe (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    at INTEGER NOT NULL
);
INSERT INTO write_probe (id, at) VALUES (1, 0);
