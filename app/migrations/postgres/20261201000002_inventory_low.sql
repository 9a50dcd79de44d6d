-- no-transaction
-- Pets running low (1 or 2 left: `model::LOW_STOCK`), for the dashboard's list: a few
-- rows to read, however large the catalog. Built CONCURRENTLY, outside a transaction
-- (squawk.toml), so that the previous release's servers keep writing stock meanwhile.
-- One statement: several would run as one implicit transaction. A build cut short
-- leaves an invalid index that IF NOT EXISTS would keep: docs/operations.md, "Upgrades".
CREATE INDEX CONCURRENTLY IF NOT EXISTS inventory_low ON inventory (quantity, pet_id) WHERE quantity BETWEEN 1 AND 2;
