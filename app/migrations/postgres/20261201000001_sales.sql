-- The dashboard's sales. Each hour of `order_hours` also keeps its revenue: the totals
-- of the orders placed in it, less those cancelled since (an order's total is fixed
-- when it is placed). Filled once from the orders here, then kept by the triggers.
ALTER TABLE order_hours ADD COLUMN revenue BIGINT NOT NULL DEFAULT 0;

-- As before, with the revenue (`server migrate-data` calls it after a copy).
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
$$;

UPDATE order_hours h SET revenue = sums.revenue
FROM (
    SELECT created_at / 3600 AS hour, SUM(total) AS revenue FROM orders
    WHERE cancelled_at IS NULL AND total IS NOT NULL GROUP BY created_at / 3600
) AS sums
WHERE h.hour = sums.hour;

CREATE OR REPLACE FUNCTION orders_tallied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO order_hours (hour, placed, revenue) VALUES (NEW.created_at / 3600, 1, COALESCE(NEW.total, 0))
        ON CONFLICT (hour) DO UPDATE
        SET placed = order_hours.placed + 1, revenue = order_hours.revenue + COALESCE(NEW.total, 0);
    RETURN NULL;
END $$;

-- Cancelled: its total leaves the hour it was placed in (once: cancelling is final).
CREATE FUNCTION orders_cancel_tallied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE order_hours SET revenue = revenue - COALESCE(NEW.total, 0) WHERE hour = NEW.created_at / 3600;
    RETURN NULL;
END $$;
CREATE TRIGGER orders_cancel_tallied AFTER UPDATE OF cancelled_at ON orders FOR EACH ROW
    WHEN (OLD.cancelled_at IS NULL AND NEW.cancelled_at IS NOT NULL) EXECUTE FUNCTION orders_cancel_tallied();
