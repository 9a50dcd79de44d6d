-- Orders and the idempotency records of POST /store/orders (contract.md, "States and
-- the rules that link orders, inventory and status").

CREATE TABLE orders (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    -- No foreign key: an order keeps the id of a pet deleted after it was completed.
    -- (A pet with open orders cannot be deleted: the service refuses it.)
    pet_id       INTEGER NOT NULL,
    -- The key that placed it: customers see and cancel only their own.
    key_id       INTEGER NOT NULL REFERENCES api_keys (id),
    quantity     INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
    ship_date    TEXT,
    complete     INTEGER NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)),
    created_at   INTEGER NOT NULL,
    -- Cancelled orders are kept for the record and are gone from the API (404).
    cancelled_at INTEGER
);
CREATE INDEX orders_open_by_pet ON orders (pet_id) WHERE complete = 0 AND cancelled_at IS NULL;
CREATE INDEX orders_by_owner ON orders (key_id, id);

-- The first answer to an Idempotency-Key, replayed to retries for 24 hours.
CREATE TABLE idempotency_records (
    key_id       INTEGER NOT NULL,
    idem_key     TEXT    NOT NULL,
    request_hash BLOB    NOT NULL,
    status       INTEGER NOT NULL,
    body         TEXT    NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (key_id, idem_key)
);
