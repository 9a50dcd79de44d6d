-- The open orders (neither complete nor cancelled), for the dashboard and the metrics:
-- a running total, one row, instead of a count through `orders_open_by_pet` on each
-- view (docs/PERFORMANCE.md). Kept by the triggers below in the transaction of each
-- write, whoever writes, and filled here from the rows. (The server's writes take one
-- lock in turn, so the one row adds no wait of its own.)
-- No order may fall between the total's fill and its triggers (another server still
-- running the previous release, say): orders are held until COMMIT.
LOCK TABLE orders IN SHARE ROW EXCLUSIVE MODE;

CREATE TABLE open_orders (
    id     BIGINT PRIMARY KEY CHECK (id = 1),
    orders BIGINT NOT NULL
);
INSERT INTO open_orders (id, orders) SELECT 1, COUNT(*) FROM orders WHERE NOT complete AND cancelled_at IS NULL;

-- As before, with the open orders (`server migrate-data` calls it after a copy).
CREATE OR REPLACE FUNCTION refill_tallies() RETURNS void LANGUAGE sql AS $$
    DELETE FROM category_pets;
    INSERT INTO category_pets (category_id, pets) SELECT category_id, COUNT(*) FROM pets GROUP BY category_id;
    UPDATE status_stock s
    SET pets = (SELECT COUNT(*) FROM pets p WHERE p.status = s.status),
        units = (SELECT COALESCE(SUM(i.quantity), 0) FROM pets p JOIN inventory i ON i.pet_id = p.id
                 WHERE p.status = s.status);
    DELETE FROM order_hours;
    INSERT INTO order_hours (hour, placed, revenue)
    SELECT created_at / 3600, COUNT(*), COALESCE(SUM(total) FILTER (WHERE cancelled_at IS NULL), 0)
    FROM orders GROUP BY created_at / 3600;
    UPDATE open_orders SET orders = (SELECT COUNT(*) FROM orders WHERE NOT complete AND cancelled_at IS NULL);
$$;

-- Adds its argument to the open orders.
CREATE FUNCTION open_orders_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE open_orders SET orders = orders + TG_ARGV[0]::bigint;
    RETURN NULL;
END $$;

CREATE TRIGGER orders_opened AFTER INSERT ON orders FOR EACH ROW
    WHEN (NOT NEW.complete AND NEW.cancelled_at IS NULL) EXECUTE FUNCTION open_orders_moved('1');
-- Completed or cancelled. (The service never opens an order again; another client
-- might, and is counted too.)
CREATE TRIGGER orders_closed AFTER UPDATE OF complete, cancelled_at ON orders FOR EACH ROW
    WHEN (NOT OLD.complete AND OLD.cancelled_at IS NULL AND (NEW.complete OR NEW.cancelled_at IS NOT NULL))
    EXECUTE FUNCTION open_orders_moved('-1');
CREATE TRIGGER orders_reopened AFTER UPDATE OF complete, cancelled_at ON orders FOR EACH ROW
    WHEN ((OLD.complete OR OLD.cancelled_at IS NOT NULL) AND NOT NEW.complete AND NEW.cancelled_at IS NULL)
    EXECUTE FUNCTION open_orders_moved('1');
CREATE TRIGGER orders_open_deleted AFTER DELETE ON orders FOR EACH ROW
    WHEN (NOT OLD.complete AND OLD.cancelled_at IS NULL) EXECUTE FUNCTION open_orders_moved('-1');

-- The hourly totals too follow an order another client cancels no more or deletes:
-- its total comes back to the hour it was placed in, or the order leaves that hour.
CREATE FUNCTION orders_uncancel_tallied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE order_hours SET revenue = revenue + COALESCE(NEW.total, 0) WHERE hour = NEW.created_at / 3600;
    RETURN NULL;
END $$;
CREATE TRIGGER orders_uncancel_tallied AFTER UPDATE OF cancelled_at ON orders FOR EACH ROW
    WHEN (OLD.cancelled_at IS NOT NULL AND NEW.cancelled_at IS NULL) EXECUTE FUNCTION orders_uncancel_tallied();

CREATE FUNCTION orders_untallied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE order_hours
    SET placed = placed - 1, revenue = revenue - CASE WHEN OLD.cancelled_at IS NULL THEN COALESCE(OLD.total, 0) ELSE 0 END
    WHERE hour = OLD.created_at / 3600;
    RETURN NULL;
END $$;
CREATE TRIGGER orders_untallied AFTER DELETE ON orders FOR EACH ROW EXECUTE FUNCTION orders_untallied();
