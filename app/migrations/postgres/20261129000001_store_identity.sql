-- A random name for this store, made once. Its servers name their shared rate-limit
-- counters and bans in Redis with it, so that two stores sharing one Redis count
-- apart (a key's id or a client's address means another caller in another store).
-- One row; a copy of the database (pg_dump, a base backup) keeps it, and is the same
-- store.
CREATE TABLE store_identity (
    id text PRIMARY KEY,
    only_one boolean NOT NULL DEFAULT true UNIQUE CHECK (only_one)
);
INSERT INTO store_identity (id) VALUES (md5(random()::text || clock_timestamp()::text));
