-- Categories, pets and their stock (contract.md, "Resources and limits" and "States").
-- AUTOINCREMENT so that a deleted resource's id is never handed out again: a third
-- party holding an old id must get 404, not somebody else's pet.

CREATE TABLE categories (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL,
    -- Unicode-lowercased name, kept by the service: names are unique case-insensitively,
    -- which SQLite's NOCASE does only for ASCII.
    name_key    TEXT    NOT NULL UNIQUE,
    description TEXT
);

CREATE TABLE pets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL,
    -- Lowercased name for the case-insensitive "name contains" search.
    name_key    TEXT    NOT NULL,
    category_id INTEGER NOT NULL REFERENCES categories (id) ON DELETE RESTRICT,
    status      TEXT    NOT NULL CHECK (status IN ('available', 'pending', 'sold'))
);
CREATE INDEX pets_category ON pets (category_id, id);
CREATE INDEX pets_status ON pets (status, id);

-- Exactly one row per pet, created and deleted with it.
CREATE TABLE inventory (
    pet_id   INTEGER PRIMARY KEY REFERENCES pets (id) ON DELETE CASCADE,
    quantity INTEGER NOT NULL CHECK (quantity >= 0)
);
