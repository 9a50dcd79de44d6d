//! Which schema a database is at, against the migrations this binary carries. A binary
//! refuses a database that a newer release has migrated further than it knows, rather
//! than guess at tables it has never seen (sqlx alone would stop with "migration … was
//! previously applied but is missing", naming no way forward).

use sqlx::migrate::Migrator;

/// Fails, writing nothing, when `applied` (the database's `_sqlx_migrations`: version
/// and description) holds a migration `known` lacks. The message names both newest
/// versions and what to do.
pub(super) fn refuse_unknown(applied: &[(i64, String)], known: &Migrator) -> Result<(), sqlx::Error> {
    let Some((theirs, description)) = applied.iter().filter(|(version, _)| !knows(known, *version)).max() else {
        return Ok(());
    };
    let ours = known.iter().map(|migration| migration.version).max().unwrap_or(0);
    Err(sqlx::Error::InvalidArgument(format!(
        "this database was migrated by a newer release of the pet store: its newest migration is {theirs} \
         ({description}), and this binary knows migrations up to {ours}. Nothing was changed. Run the \
         release that migrated it (or a later one), or restore a backup taken before that upgrade."
    )))
}

fn knows(known: &Migrator, version: i64) -> bool {
    known.iter().any(|migration| migration.version == version)
}

#[cfg(test)]
mod tests {
    use super::*;

    static SQLITE: Migrator = sqlx::migrate!("./migrations/sqlite");

    #[test]
    fn a_database_this_binary_migrated_is_accepted_and_a_newer_one_refused_by_name() {
        let ours: Vec<(i64, String)> = SQLITE.iter().map(|m| (m.version, m.description.to_string())).collect();
        assert!(refuse_unknown(&ours, &SQLITE).is_ok());
        assert!(refuse_unknown(&ours[..1], &SQLITE).is_ok(), "an older database is migrated, not refused");
        assert!(refuse_unknown(&[], &SQLITE).is_ok(), "a new database");

        let mut newer = ours.clone();
        newer.push((99991231000000, "loyalty points".into()));
        let message = refuse_unknown(&newer, &SQLITE).unwrap_err().to_string();
        let newest = ours.iter().map(|(v, _)| *v).max().unwrap();
        assert!(message.contains("99991231000000 (loyalty points)"), "{message}");
        assert!(message.contains(&format!("up to {newest}")), "{message}");
    }
}
