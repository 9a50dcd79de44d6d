-- Pet content (contract.md, "Pet content"): what a shopper reads and sees of a pet, and
-- what an order paid. Every new column is nullable, so that rows another client writes
-- naming only the specification's columns stay valid.

-- Plain text, at most 2,000 characters (the service's rule).
ALTER TABLE pets ADD COLUMN description TEXT;
-- Minor units of the store's currency (`--currency`); NULL while the pet has no price.
ALTER TABLE pets ADD COLUMN price INTEGER CHECK (price BETWEEN 0 AND 100000000);
-- The content hash of the pet's photo (its URLs name it), NULL while it has none; its
-- encoded widths are in pet_photos.
ALTER TABLE pets ADD COLUMN photo_hash TEXT;

-- The catalog's sorts, each read in order from an index: by name, and by price with the
-- pets without one last (the sort key the service pages by).
CREATE INDEX pets_by_name ON pets (name_key, id);
CREATE INDEX pets_by_price ON pets (COALESCE(price, 9223372036854775807), id);

-- A photo as served: one WebP per width, replaced together (the hash changes with the
-- content, so a URL always names the same bytes).
CREATE TABLE pet_photos (
    pet_id INTEGER NOT NULL REFERENCES pets (id) ON DELETE CASCADE,
    width  INTEGER NOT NULL CHECK (width IN (320, 640, 1280)),
    hash   TEXT    NOT NULL,
    bytes  BLOB    NOT NULL,
    PRIMARY KEY (pet_id, width)
);

-- What an order cost when it was placed (later price changes do not touch it); NULL for
-- pets without a price.
ALTER TABLE orders ADD COLUMN unit_price INTEGER;
ALTER TABLE orders ADD COLUMN total INTEGER;
