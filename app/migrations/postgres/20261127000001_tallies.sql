-- Running totals the staff dashboard and the catalog's category list read instead of
-- counting a million rows on each view (docs/PERFORMANCE.md, "At a million pets"):
-- pets per category, pets and units per status, orders per hour. Kept by triggers in
-- the transaction of each write, whoever writes, and filled here from the rows already
-- there. The same tables and rules as SQLite's migration of the same name.

-- No write may fall between the totals' fill and their triggers (another server still
-- running the previous release, say): the tables they count are held until COMMIT.
LOCK TABLE pets, inventory, orders IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE category_pets (
    category_id BIGINT PRIMARY KEY REFERENCES categories (id) ON DELETE CASCADE,
    pets        BIGINT NOT NULL
);

CREATE TABLE status_stock (
    status TEXT   PRIMARY KEY CHECK (status IN ('available', 'pending', 'sold')),
    pets   BIGINT NOT NULL,
    units  BIGINT NOT NULL
);
INSERT INTO status_stock (status, pets, units) VALUES ('available', 0, 0), ('pending', 0, 0), ('sold', 0, 0);

-- Hours since the epoch (created_at / 3600): orders placed in it, cancelled ones included.
CREATE TABLE order_hours (
    hour   BIGINT PRIMARY KEY,
    placed BIGINT NOT NULL
);

-- The totals counted again from the rows: here, and by `server migrate-data`, which
-- copies with the triggers below turned off (row by row, in one transaction, they
-- would update the same three rows a million times).
CREATE FUNCTION refill_tallies() RETURNS void LANGUAGE sql AS $$
    DELETE FROM category_pets;
    INSERT INTO category_pets (category_id, pets) SELECT category_id, COUNT(*) FROM pets GROUP BY category_id;
    UPDATE status_stock s
    SET pets = (SELECT COUNT(*) FROM pets p WHERE p.status = s.status),
        units = (SELECT COALESCE(SUM(i.quantity), 0) FROM pets p JOIN inventory i ON i.pet_id = p.id
                 WHERE p.status = s.status);
    DELETE FROM order_hours;
    INSERT INTO order_hours (hour, placed) SELECT created_at / 3600, COUNT(*) FROM orders GROUP BY created_at / 3600;
$$;
SELECT refill_tallies();

-- Inserted pets: one more in their category and status.
CREATE FUNCTION pets_tallied_in() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO category_pets (category_id, pets) VALUES (NEW.category_id, 1)
        ON CONFLICT (category_id) DO UPDATE SET pets = category_pets.pets + 1;
    UPDATE status_stock SET pets = pets + 1 WHERE status = NEW.status;
    RETURN NULL;
END $$;
CREATE TRIGGER pets_tallied_in AFTER INSERT ON pets FOR EACH ROW EXECUTE FUNCTION pets_tallied_in();

-- Before, while the pet's stock row is still there: deleting the pet deletes that row
-- too (ON DELETE CASCADE), after the pet is gone, so the stock row's own trigger no
-- longer finds the pet's status and leaves the units to this one.
CREATE FUNCTION pets_tallied_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE category_pets SET pets = pets - 1 WHERE category_id = OLD.category_id;
    UPDATE status_stock
    SET pets = pets - 1, units = units - COALESCE((SELECT quantity FROM inventory WHERE pet_id = OLD.id), 0)
    WHERE status = OLD.status;
    RETURN OLD;
END $$;
CREATE TRIGGER pets_tallied_out BEFORE DELETE ON pets FOR EACH ROW EXECUTE FUNCTION pets_tallied_out();

CREATE FUNCTION pets_tallied_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    stock BIGINT := COALESCE((SELECT quantity FROM inventory WHERE pet_id = NEW.id), 0);
BEGIN
    IF NEW.category_id IS DISTINCT FROM OLD.category_id THEN
        UPDATE category_pets SET pets = pets - 1 WHERE category_id = OLD.category_id;
        INSERT INTO category_pets (category_id, pets) VALUES (NEW.category_id, 1)
            ON CONFLICT (category_id) DO UPDATE SET pets = category_pets.pets + 1;
    END IF;
    IF NEW.status IS DISTINCT FROM OLD.status THEN
        UPDATE status_stock SET pets = pets - 1, units = units - stock WHERE status = OLD.status;
        UPDATE status_stock SET pets = pets + 1, units = units + stock WHERE status = NEW.status;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER pets_tallied_change AFTER UPDATE OF category_id, status ON pets
    FOR EACH ROW EXECUTE FUNCTION pets_tallied_change();

-- A stock row's units, under its pet's status (none when the pet is already gone): a
-- trigger for each kind of change, each one statement, and an update only when the
-- quantity moved (an order's is the hot path).
CREATE FUNCTION inventory_tallied_in() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE status_stock SET units = units + NEW.quantity WHERE status = (SELECT status FROM pets WHERE id = NEW.pet_id);
    RETURN NULL;
END $$;
CREATE TRIGGER inventory_tallied_in AFTER INSERT ON inventory FOR EACH ROW EXECUTE FUNCTION inventory_tallied_in();

CREATE FUNCTION inventory_tallied_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE status_stock SET units = units + NEW.quantity - OLD.quantity
    WHERE status = (SELECT status FROM pets WHERE id = NEW.pet_id);
    RETURN NULL;
END $$;
CREATE TRIGGER inventory_tallied_change AFTER UPDATE OF quantity ON inventory
    FOR EACH ROW WHEN (NEW.quantity IS DISTINCT FROM OLD.quantity) EXECUTE FUNCTION inventory_tallied_change();

CREATE FUNCTION inventory_tallied_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE status_stock SET units = units - OLD.quantity WHERE status = (SELECT status FROM pets WHERE id = OLD.pet_id);
    RETURN NULL;
END $$;
CREATE TRIGGER inventory_tallied_out AFTER DELETE ON inventory FOR EACH ROW EXECUTE FUNCTION inventory_tallied_out();

CREATE FUNCTION orders_tallied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO order_hours (hour, placed) VALUES (NEW.created_at / 3600, 1)
        ON CONFLICT (hour) DO UPDATE SET placed = order_hours.placed + 1;
    RETURN NULL;
END $$;
CREATE TRIGGER orders_tallied AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION orders_tallied();
