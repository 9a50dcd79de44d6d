//! Pets and their catalog cards (a pet with its category's name and its stock).

use sqlx::{QueryBuilder, Sqlite};

use super::Conn;
use crate::db::Db;
use crate::error::AppResult;
use crate::model::{PetCard, PetFilter, PetStatus};
use crate::services::paging::PageRequest;

const CARD_COLUMNS: &str = "SELECT p.id, p.name, p.category_id, c.name AS category_name, p.status, i.quantity
     FROM pets p
     JOIN categories c ON c.id = p.category_id
     JOIN inventory i ON i.pet_id = p.id";

/// The cards after `page.after` matching `filter` (`q` already folded), by id, one
/// more than the page holds.
pub async fn cards(
    db: &Db,
    filter: &PetFilter,
    name_key_part: Option<&str>,
    page: PageRequest,
) -> AppResult<Vec<PetCard>> {
    let mut sql = QueryBuilder::<Sqlite>::new(CARD_COLUMNS);
    sql.push(" WHERE p.id > ").push_bind(page.after);
    if let Some(status) = filter.status {
        sql.push(" AND p.status = ").push_bind(status);
    }
    if let Some(category_id) = filter.category_id {
        sql.push(" AND p.category_id = ").push_bind(category_id);
    }
    if let Some(part) = name_key_part {
        sql.push(" AND instr(p.name_key, ").push_bind(part.to_owned()).push(") > 0");
    }
    if let Some(ids) = &filter.ids {
        sql.push(" AND p.id IN (");
        let mut list = sql.separated(", ");
        for id in ids {
            list.push_bind(*id);
        }
        sql.push(")");
    }
    sql.push(" ORDER BY p.id LIMIT ").push_bind(page.fetch_limit());
    Ok(sql.build_query_as().fetch_all(db.pool()).await?)
}

pub async fn card(db: &Db, id: i64) -> AppResult<Option<PetCard>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!("{CARD_COLUMNS} WHERE p.id = ?")))
        .bind(id)
        .fetch_optional(db.pool())
        .await?)
}

/// Inserts a pet with its inventory row; returns its id.
pub async fn insert(
    conn: &mut Conn,
    name: &str,
    name_key: &str,
    category_id: i64,
    status: PetStatus,
    stock: i64,
) -> AppResult<i64> {
    let id: i64 =
        sqlx::query_scalar("INSERT INTO pets (name, name_key, category_id, status) VALUES (?, ?, ?, ?) RETURNING id")
            .bind(name)
            .bind(name_key)
            .bind(category_id)
            .bind(status)
            .fetch_one(&mut *conn)
            .await?;
    sqlx::query("INSERT INTO inventory (pet_id, quantity) VALUES (?, ?)")
        .bind(id)
        .bind(stock)
        .execute(&mut *conn)
        .await?;
    Ok(id)
}

pub async fn rename(conn: &mut Conn, id: i64, name: &str, name_key: &str, category_id: i64) -> AppResult<()> {
    sqlx::query("UPDATE pets SET name = ?, name_key = ?, category_id = ? WHERE id = ?")
        .bind(name)
        .bind(name_key)
        .bind(category_id)
        .bind(id)
        .execute(&mut *conn)
        .await?;
    Ok(())
}

/// Deletes the pet; its inventory row goes with it (ON DELETE CASCADE).
pub async fn delete(conn: &mut Conn, id: i64) -> AppResult<()> {
    sqlx::query("DELETE FROM pets WHERE id = ?").bind(id).execute(&mut *conn).await?;
    Ok(())
}

pub async fn name(conn: &mut Conn, id: i64) -> AppResult<Option<String>> {
    Ok(sqlx::query_scalar("SELECT name FROM pets WHERE id = ?").bind(id).fetch_optional(&mut *conn).await?)
}

/// How many categories and pets the store has.
pub async fn catalog_size(db: &Db) -> AppResult<(i64, i64)> {
    Ok(sqlx::query_as("SELECT (SELECT COUNT(*) FROM categories), (SELECT COUNT(*) FROM pets)")
        .fetch_one(db.pool())
        .await?)
}
