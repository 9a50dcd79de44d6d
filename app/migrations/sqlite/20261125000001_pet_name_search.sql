-- Name search through an index. `q` is a case-insensitive "contains" on the pet's name:
-- the folded name (`name_key`) contains the folded query. A scan of every row grew
-- with the catalog (80-130 ms at a million pets); this trigram index finds a substring
-- of three characters or more from the trigrams it is made of. It is an FTS5 table over
-- `pets` itself (external content: no second copy of the names), kept in step by
-- triggers in the same transaction as the write, so that rows written by another
-- process, or at the sqlite3 prompt, are found too. (Such a client needs FTS5 with the
-- trigram tokenizer, SQLite 3.34 or newer, to write to `pets` at all: Debian's 3.40 has
-- it.)
CREATE VIRTUAL TABLE pet_names USING fts5 (
    name_key,
    content = 'pets',
    content_rowid = 'id',
    tokenize = 'trigram case_sensitive 1'
);
INSERT INTO pet_names (pet_names) VALUES ('rebuild');

CREATE TRIGGER pet_names_inserted AFTER INSERT ON pets
BEGIN
    INSERT INTO pet_names (rowid, name_key) VALUES (new.id, new.name_key);
END;
CREATE TRIGGER pet_names_deleted AFTER DELETE ON pets
BEGIN
    INSERT INTO pet_names (pet_names, rowid, name_key) VALUES ('delete', old.id, old.name_key);
END;
CREATE TRIGGER pet_names_updated AFTER UPDATE OF name_key ON pets
BEGIN
    INSERT INTO pet_names (pet_names, rowid, name_key) VALUES ('delete', old.id, old.name_key);
    INSERT INTO pet_names (rowid, name_key) VALUES (new.id, new.name_key);
END;
