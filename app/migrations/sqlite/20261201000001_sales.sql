-- The dashboard's sales. Each hour of `order_hours` also keeps its revenue: the totals
-- of the orders placed in it, less those cancelled since (an order's total is fixed
-- when it is placed). Filled once from the orders here, then kept by the triggers.
ALTER TABLE order_hours ADD COLUMN revenue INTEGER NOT NULL DEFAULT 0;
UPDATE order_hours SET revenue = sums.revenue
FROM (
    SELECT created_at / 3600 AS hour, SUM(total) AS revenue FROM orders
    WHERE cancelled_at IS NULL AND total IS NOT NULL GROUP BY created_at / 3600
) AS sums
WHERE order_hours.hour = sums.hour;

DROP TRIGGER orders_tallied;
CREATE TRIGGER orders_tallied AFTER INSERT ON orders
BEGIN
    INSERT INTO order_hours (hour, placed, revenue) VALUES (NEW.created_at / 3600, 1, COALESCE(NEW.total, 0))
        ON CONFLICT (hour) DO UPDATE SET placed = placed + 1, revenue = revenue + COALESCE(NEW.total, 0);
END;

-- Cancelled: its total leaves the hour it was placed in (once: cancelling is final).
CREATE TRIGGER orders_cancel_tallied AFTER UPDATE OF cancelled_at ON orders
    WHEN OLD.cancelled_at IS NULL AND NEW.cancelled_at IS NOT NULL
BEGIN
    UPDATE order_hours SET revenue = revenue - COALESCE(NEW.total, 0) WHERE hour = NEW.created_at / 3600;
END;

-- Pets running low (1 or 2 left: `model::LOW_STOCK`), for the dashboard's list: a few
-- rows to read, however large the catalog. The query repeats this predicate as it is.
CREATE INDEX inventory_low ON inventory (quantity, pet_id) WHERE quantity BETWEEN 1 AND 2;
