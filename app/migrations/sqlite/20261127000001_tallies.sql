-- Running totals the staff dashboard and the catalog's category list read instead of
-- counting a million rows on each view (docs/PERFORMANCE.md, "At a million pets"):
-- pets per category, pets and units per status, orders per hour. Kept by triggers in
-- the transaction of each write, whoever writes (this server, another process, the
-- sqlite3 prompt), and filled here from the rows already there.

CREATE TABLE category_pets (
    category_id INTEGER PRIMARY KEY REFERENCES categories (id) ON DELETE CASCADE,
    pets        INTEGER NOT NULL
);
INSERT INTO category_pets (category_id, pets) SELECT category_id, COUNT(*) FROM pets GROUP BY category_id;

CREATE TABLE status_stock (
    status TEXT    PRIMARY KEY CHECK (status IN ('available', 'pending', 'sold')),
    pets   INTEGER NOT NULL,
    units  INTEGER NOT NULL
);
INSERT INTO status_stock (status, pets, units)
SELECT s.status,
       (SELECT COUNT(*) FROM pets p WHERE p.status = s.status),
       (SELECT COALESCE(SUM(i.quantity), 0) FROM pets p JOIN inventory i ON i.pet_id = p.id WHERE p.status = s.status)
FROM (SELECT 'available' AS status UNION ALL SELECT 'pending' UNION ALL SELECT 'sold') s;

-- Hours since the epoch (created_at / 3600): orders placed in it, cancelled ones included.
CREATE TABLE order_hours (
    hour   INTEGER PRIMARY KEY,
    placed INTEGER NOT NULL
);
INSERT INTO order_hours (hour, placed) SELECT created_at / 3600, COUNT(*) FROM orders GROUP BY created_at / 3600;

CREATE TRIGGER pets_tallied_in AFTER INSERT ON pets
BEGIN
    INSERT INTO category_pets (category_id, pets) VALUES (NEW.category_id, 1)
        ON CONFLICT (category_id) DO UPDATE SET pets = pets + 1;
    UPDATE status_stock SET pets = pets + 1 WHERE status = NEW.status;
END;

-- Before, while the pet's stock row is still there: deleting the pet deletes that row
-- too (ON DELETE CASCADE), after the pet is gone, so the stock row's own trigger below
-- no longer finds the pet's status and leaves the units to this one.
CREATE TRIGGER pets_tallied_out BEFORE DELETE ON pets
BEGIN
    UPDATE category_pets SET pets = pets - 1 WHERE category_id = OLD.category_id;
    UPDATE status_stock
    SET pets = pets - 1, units = units - COALESCE((SELECT quantity FROM inventory WHERE pet_id = OLD.id), 0)
    WHERE status = OLD.status;
END;

CREATE TRIGGER pets_tallied_category AFTER UPDATE OF category_id ON pets
WHEN NEW.category_id IS NOT OLD.category_id
BEGIN
    UPDATE category_pets SET pets = pets - 1 WHERE category_id = OLD.category_id;
    INSERT INTO category_pets (category_id, pets) VALUES (NEW.category_id, 1)
        ON CONFLICT (category_id) DO UPDATE SET pets = pets + 1;
END;

CREATE TRIGGER pets_tallied_status AFTER UPDATE OF status ON pets
WHEN NEW.status IS NOT OLD.status
BEGIN
    UPDATE status_stock
    SET pets = pets - 1, units = units - COALESCE((SELECT quantity FROM inventory WHERE pet_id = NEW.id), 0)
    WHERE status = OLD.status;
    UPDATE status_stock
    SET pets = pets + 1, units = units + COALESCE((SELECT quantity FROM inventory WHERE pet_id = NEW.id), 0)
    WHERE status = NEW.status;
END;

CREATE TRIGGER inventory_tallied_in AFTER INSERT ON inventory
BEGIN
    UPDATE status_stock SET units = units + NEW.quantity
    WHERE status = (SELECT status FROM pets WHERE id = NEW.pet_id);
END;

CREATE TRIGGER inventory_tallied_change AFTER UPDATE OF quantity ON inventory
BEGIN
    UPDATE status_stock SET units = units + NEW.quantity - OLD.quantity
    WHERE status = (SELECT status FROM pets WHERE id = NEW.pet_id);
END;

CREATE TRIGGER inventory_tallied_out AFTER DELETE ON inventory
BEGIN
    UPDATE status_stock SET units = units - OLD.quantity
    WHERE status = (SELECT status FROM pets WHERE id = OLD.pet_id);
END;

CREATE TRIGGER orders_tallied AFTER INSERT ON orders
BEGIN
    INSERT INTO order_hours (hour, placed) VALUES (NEW.created_at / 3600, 1)
        ON CONFLICT (hour) DO UPDATE SET placed = placed + 1;
END;
