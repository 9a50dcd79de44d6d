-- no-transaction
-- The storefront's search looks in a pet's name, its category's name and its
-- description (the REST API's `q`, in names only). Names have `pets_name_trigrams`;
-- this trigram index answers ILIKE on descriptions, however large the catalog.
-- Categories are few and read whole. Built CONCURRENTLY, outside a transaction
-- (squawk.toml), so that the previous release's servers keep writing meanwhile. A build
-- cut short leaves an invalid index that IF NOT EXISTS would keep: docs/operations.md,
-- "Upgrades".
CREATE INDEX CONCURRENTLY IF NOT EXISTS pets_description_trigrams ON pets USING gin (description gin_trgm_ops);
