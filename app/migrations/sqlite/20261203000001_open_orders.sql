-- The open orders (neither complete nor cancelled), for the dashboard and the metrics:
-- a running total, one row, instead of a count through `orders_open_by_pet` on each
-- view (31 ms at a million orders: docs/PERFORMANCE.md). Kept by the triggers below in
-- the transaction of each write, whoever writes, and filled here from the rows.
CREATE TABLE open_orders (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    orders INTEGER NOT NULL
);
INSERT INTO open_orders (id, orders) SELECT 1, COUNT(*) FROM orders WHERE complete = 0 AND cancelled_at IS NULL;

CREATE TRIGGER orders_opened AFTER INSERT ON orders
WHEN NEW.complete = 0 AND NEW.cancelled_at IS NULL
BEGIN
    UPDATE open_orders SET orders = orders + 1;
END;

-- Completed or cancelled. (The service never opens an order again; another client
-- might, and is counted too.)
CREATE TRIGGER orders_closed AFTER UPDATE OF complete, cancelled_at ON orders
WHEN (OLD.complete = 0 AND OLD.cancelled_at IS NULL) AND NOT (NEW.complete = 0 AND NEW.cancelled_at IS NULL)
BEGIN
    UPDATE open_orders SET orders = orders - 1;
END;

CREATE TRIGGER orders_reopened AFTER UPDATE OF complete, cancelled_at ON orders
WHEN NOT (OLD.complete = 0 AND OLD.cancelled_at IS NULL) AND (NEW.complete = 0 AND NEW.cancelled_at IS NULL)
BEGIN
    UPDATE open_orders SET orders = orders + 1;
END;

CREATE TRIGGER orders_open_deleted AFTER DELETE ON orders
WHEN OLD.complete = 0 AND OLD.cancelled_at IS NULL
BEGIN
    UPDATE open_orders SET orders = orders - 1;
END;

-- The hourly totals too follow an order another client cancels no more or deletes:
-- its total comes back to the hour it was placed in, or the order leaves that hour.
CREATE TRIGGER orders_uncancel_tallied AFTER UPDATE OF cancelled_at ON orders
    WHEN OLD.cancelled_at IS NOT NULL AND NEW.cancelled_at IS NULL
BEGIN
    UPDATE order_hours SET revenue = revenue + COALESCE(NEW.total, 0) WHERE hour = NEW.created_at / 3600;
END;

CREATE TRIGGER orders_untallied AFTER DELETE ON orders
BEGIN
    UPDATE order_hours
    SET placed = placed - 1, revenue = revenue - CASE WHEN OLD.cancelled_at IS NULL THEN COALESCE(OLD.total, 0) ELSE 0 END
    WHERE hour = OLD.created_at / 3600;
END;
