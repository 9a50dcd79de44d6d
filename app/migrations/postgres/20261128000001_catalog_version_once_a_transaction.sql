-- The catalog's version moves on once a transaction, not once a statement. The write
-- queue's batch of orders moved it once an order: each time a new version of its one
-- row, which the batch's later updates walked past, all under the store's write lock.
-- The caches only compare it for a change (db::Db::watch_catalog), which one move a
-- transaction still shows. What the transaction did is kept in a setting local to it
-- (`set_config(…, true)`): it ends with the transaction and is undone with a savepoint
-- rolled back, as the move itself is.
CREATE OR REPLACE FUNCTION catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('petstore.catalog_moved', true) IS DISTINCT FROM 'yes' THEN
        UPDATE catalog_version SET version = version + 1;
        PERFORM set_config('petstore.catalog_moved', 'yes', true);
    END IF;
    RETURN NULL;
END
$$;
