-- A counter every change to the catalog (categories, pets, their stock) moves on, in
-- the same transaction, whoever writes: this server, another process on the same
-- file, a person at the sqlite3 prompt. The server's read caches compare it a few
-- times a second (app/src/db/mod.rs, `watch_catalog`), so a change they did not make
-- themselves is seen within that time instead of after a fixed expiry.

CREATE TABLE catalog_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO catalog_version (id, version) VALUES (1, 0);

CREATE TRIGGER categories_inserted AFTER INSERT ON categories
BEGIN UPDATE catalog_version SET version = version + 1; END;
CREATE TRIGGER categories_updated AFTER UPDATE ON categories
BEGIN UPDATE catalog_version SET version = version + 1; END;
CREATE TRIGGER categories_deleted AFTER DELETE ON categories
BEGIN UPDATE catalog_version SET version = version + 1; END;

CREATE TRIGGER pets_inserted AFTER INSERT ON pets
BEGIN UPDATE catalog_version SET version = version + 1; END;
CREATE TRIGGER pets_updated AFTER UPDATE ON pets
BEGIN UPDATE catalog_version SET version = version + 1; END;
CREATE TRIGGER pets_deleted AFTER DELETE ON pets
BEGIN UPDATE catalog_version SET version = version + 1; END;

CREATE TRIGGER inventory_inserted AFTER INSERT ON inventory
BEGIN UPDATE catalog_version SET version = version + 1; END;
CREATE TRIGGER inventory_updated AFTER UPDATE ON inventory
BEGIN UPDATE catalog_version SET version = version + 1; END;
CREATE TRIGGER inventory_deleted AFTER DELETE ON inventory
BEGIN UPDATE catalog_version SET version = version + 1; END;
