-- The storefront's search looks in a pet's name, its category's name and its
-- description (a shopper types "cat" or "calm"); the REST API's `q` still looks in
-- names only. One FTS5 trigram index serves both, replacing `pet_names` (names only):
-- a search of names is a search of its `name_key` column.
--
-- Its content is the view `pet_search_rows` (external content: no second copy of the
-- text), kept in step by triggers in the same transaction as the write, so that rows
-- written by another process, or at the sqlite3 prompt, are found too. The trigram
-- tokenizer folds case itself, for descriptions; names are folded already.
--
-- Renaming a category re-indexes its pets in the renaming transaction: a rename of a
-- category of a million pets takes seconds, and writes wait for it.
DROP TRIGGER pet_names_inserted;
DROP TRIGGER pet_names_deleted;
DROP TRIGGER pet_names_updated;
DROP TABLE pet_names;

CREATE VIEW pet_search_rows AS
SELECT p.id, p.name_key, c.name_key AS category_key, p.description
FROM pets p
JOIN categories c ON c.id = p.category_id;

CREATE VIRTUAL TABLE pet_text USING fts5 (
    name_key,
    category_key,
    description,
    content = 'pet_search_rows',
    content_rowid = 'id',
    tokenize = 'trigram'
);
INSERT INTO pet_text (pet_text) VALUES ('rebuild');

-- What the index holds must be given back, value for value, to take a row out of it.
CREATE TRIGGER pet_text_inserted AFTER INSERT ON pets
BEGIN
    INSERT INTO pet_text (rowid, name_key, category_key, description)
    VALUES (new.id, new.name_key, (SELECT name_key FROM categories WHERE id = new.category_id), new.description);
END;
CREATE TRIGGER pet_text_deleted AFTER DELETE ON pets
BEGIN
    INSERT INTO pet_text (pet_text, rowid, name_key, category_key, description)
    VALUES ('delete', old.id, old.name_key, (SELECT name_key FROM categories WHERE id = old.category_id),
            old.description);
END;
CREATE TRIGGER pet_text_updated AFTER UPDATE OF name_key, category_id, description ON pets
BEGIN
    INSERT INTO pet_text (pet_text, rowid, name_key, category_key, description)
    VALUES ('delete', old.id, old.name_key, (SELECT name_key FROM categories WHERE id = old.category_id),
            old.description);
    INSERT INTO pet_text (rowid, name_key, category_key, description)
    VALUES (new.id, new.name_key, (SELECT name_key FROM categories WHERE id = new.category_id), new.description);
END;
CREATE TRIGGER pet_text_category_renamed AFTER UPDATE OF name_key ON categories
WHEN old.name_key IS NOT new.name_key
BEGIN
    INSERT INTO pet_text (pet_text, rowid, name_key, category_key, description)
    SELECT 'delete', id, name_key, old.name_key, description FROM pets WHERE category_id = old.id;
    INSERT INTO pet_text (rowid, name_key, category_key, description)
    SELECT id, name_key, new.name_key, description FROM pets WHERE category_id = new.id;
END;
