-- The catalog's version moves on once a transaction, not once a statement. The write
-- queue's batch of orders moved it once an order: each time a new version of its one
-- row, which the batch's later updates walked past, all under the store's write lock.
-- The caches only compare it for a change (db::Db::watch_catalog), which one move a
-- transaction still shows. (xid8 never repeats: a new transaction always differs.)
ALTER TABLE catalog_version ADD COLUMN moved_by xid8;

CREATE OR REPLACE FUNCTION catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE catalog_version SET version = version + 1, moved_by = pg_current_xact_id()
    WHERE moved_by IS DISTINCT FROM pg_current_xact_id();
    RETURN NULL;
END
$$;
