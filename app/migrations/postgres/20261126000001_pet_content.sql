-- Pet content: the same columns and table as ../sqlite/20261126000001_pet_content.sql
-- (read there for what each is for), in PostgreSQL's types.

ALTER TABLE pets ADD COLUMN description TEXT;
ALTER TABLE pets ADD COLUMN price BIGINT CHECK (price BETWEEN 0 AND 100000000);
ALTER TABLE pets ADD COLUMN photo_hash TEXT;

-- Byte order, as SQLite's BINARY, so that both engines sort names alike.
CREATE INDEX pets_by_name ON pets (name_key COLLATE "C", id);
CREATE INDEX pets_by_price ON pets ((COALESCE(price, 9223372036854775807)), id);

CREATE TABLE pet_photos (
    pet_id BIGINT NOT NULL REFERENCES pets (id) ON DELETE CASCADE,
    width  BIGINT NOT NULL CHECK (width IN (320, 640, 1280)),
    hash   TEXT   NOT NULL,
    bytes  BYTEA  NOT NULL,
    PRIMARY KEY (pet_id, width)
);

ALTER TABLE orders ADD COLUMN unit_price BIGINT;
ALTER TABLE orders ADD COLUMN total BIGINT;
