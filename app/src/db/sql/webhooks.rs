//! Webhook endpoints and their deliveries (each attempt, made or to make).

use sqlx::{Database, Encode, QueryBuilder, Type};

use super::{Conn, on_conn, on_pool};
use crate::db::Db;
use crate::error::AppResult;

/// An endpoint as stored (its secrets included: never sent back but at creation).
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct WebhookRow {
    pub id: i64,
    pub url: String,
    pub events: String,
    pub description: Option<String>,
    pub enabled: bool,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_until: Option<i64>,
    pub created_at: i64,
    pub failing_since: Option<i64>,
    pub disabled_reason: Option<String>,
}

const WEBHOOK_COLUMNS: &str = "SELECT id, url, events, description, enabled, secret, previous_secret, previous_until,
     created_at, failing_since, disabled_reason FROM webhooks";

pub async fn insert(
    conn: &mut Conn,
    url: &str,
    events: &str,
    description: Option<&str>,
    secret: &str,
    created_at: i64,
) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar(
        "INSERT INTO webhooks (url, events, description, enabled, secret, created_at)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id"
    )
    .bind(url)
    .bind(events)
    .bind(description)
    .bind(true)
    .bind(secret)
    .bind(created_at)
    .fetch_one(c)
    .await)?)
}

pub async fn get(db: &Db, id: i64) -> AppResult<Option<WebhookRow>> {
    let sql = format!("{WEBHOOK_COLUMNS} WHERE id = $1");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(pool).await)?)
}

pub async fn get_in(conn: &mut Conn, id: i64) -> AppResult<Option<WebhookRow>> {
    let sql = format!("{WEBHOOK_COLUMNS} WHERE id = $1");
    Ok(on_conn!(conn, |c| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(c).await)?)
}

/// Every endpoint, by id (a store has a handful).
pub async fn list(db: &Db) -> AppResult<Vec<WebhookRow>> {
    let sql = format!("{WEBHOOK_COLUMNS} ORDER BY id");
    Ok(on_pool!(db, |pool| sqlx::query_as(sqlx::AssertSqlSafe(sql)).fetch_all(pool).await)?)
}

/// The enabled endpoints, inside a write transaction.
pub async fn enabled_in(conn: &mut Conn) -> AppResult<Vec<WebhookRow>> {
    let sql = format!("{WEBHOOK_COLUMNS} WHERE enabled = $1 ORDER BY id");
    Ok(on_conn!(conn, |c| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(true).fetch_all(c).await)?)
}

/// Rewrites what an update may change.
pub async fn update(conn: &mut Conn, row: &WebhookRow) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query(
        "UPDATE webhooks SET url = $1, events = $2, description = $3, enabled = $4, secret = $5,
             previous_secret = $6, previous_until = $7, failing_since = $8, disabled_reason = $9
         WHERE id = $10"
    )
    .bind(&row.url)
    .bind(&row.events)
    .bind(&row.description)
    .bind(row.enabled)
    .bind(&row.secret)
    .bind(&row.previous_secret)
    .bind(row.previous_until)
    .bind(row.failing_since)
    .bind(&row.disabled_reason)
    .bind(row.id)
    .execute(c)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

/// Deletes the endpoint and its deliveries.
pub async fn delete(conn: &mut Conn, id: i64) -> AppResult<bool> {
    let deleted = on_conn!(conn, |c| sqlx::query("DELETE FROM webhooks WHERE id = $1")
        .bind(id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(deleted > 0)
}

/// A delivery as the API lists it, with its event's id and type.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct DeliveryRow {
    pub id: i64,
    pub webhook_id: i64,
    pub event_seq: i64,
    pub event_id: String,
    pub event_type: String,
    pub attempt: i64,
    pub status: String,
    pub created_at: i64,
    pub due_at: Option<i64>,
    pub attempted_at: Option<i64>,
    pub response_status: Option<i64>,
    pub duration_ms: Option<i64>,
    pub error: Option<String>,
    pub response_body: Option<String>,
    /// The event as stored, for the body the delivery sends.
    pub event_created_at: i64,
    pub event_data: String,
}

const DELIVERY_COLUMNS: &str = "SELECT d.id, d.webhook_id, d.event_seq, e.id AS event_id, e.type AS event_type,
     d.attempt, d.status, d.created_at, d.due_at, d.attempted_at, d.response_status, d.duration_ms, d.error,
     d.response_body, e.created_at AS event_created_at, e.data AS event_data
     FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq";

/// A pending attempt (`attempt`) of sending event `event_seq` to the endpoint, due at
/// `due_at`.
pub async fn insert_pending(
    conn: &mut Conn,
    webhook_id: i64,
    event_seq: i64,
    attempt: i64,
    now: i64,
    due_at: i64,
) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar(
        "INSERT INTO webhook_deliveries (webhook_id, event_seq, attempt, status, created_at, due_at)
         VALUES ($1, $2, $3, 'pending', $4, $5) RETURNING id"
    )
    .bind(webhook_id)
    .bind(event_seq)
    .bind(attempt)
    .bind(now)
    .bind(due_at)
    .fetch_one(c)
    .await)?)
}

/// The endpoint's deliveries, newest first, before `before` (when not 0), `limit` of
/// them.
pub async fn deliveries(db: &Db, webhook_id: i64, before: i64, limit: i64) -> AppResult<Vec<DeliveryRow>> {
    Ok(on_pool!(db, |pool| {
        let mut sql = QueryBuilder::new(DELIVERY_COLUMNS);
        push_deliveries(&mut sql, webhook_id, before, limit);
        sql.build_query_as().fetch_all(pool).await
    })?)
}

fn push_deliveries<DB: Database>(sql: &mut QueryBuilder<DB>, webhook_id: i64, before: i64, limit: i64)
where
    i64: for<'q> Encode<'q, DB> + Type<DB>,
{
    sql.push(" WHERE d.webhook_id = ").push_bind(webhook_id);
    if before > 0 {
        sql.push(" AND d.id < ").push_bind(before);
    }
    sql.push(" ORDER BY d.id DESC LIMIT ").push_bind(limit);
}

pub async fn delivery_in(conn: &mut Conn, id: i64) -> AppResult<Option<DeliveryRow>> {
    let sql = format!("{DELIVERY_COLUMNS} WHERE d.id = $1");
    Ok(on_conn!(conn, |c| sqlx::query_as(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(c).await)?)
}

/// The pending attempt of this event to this endpoint, if there is one.
pub async fn pending_for(conn: &mut Conn, webhook_id: i64, event_seq: i64) -> AppResult<Option<(i64, i64)>> {
    Ok(on_conn!(conn, |c| sqlx::query_as(
        "SELECT id, attempt FROM webhook_deliveries WHERE webhook_id = $1 AND event_seq = $2 AND status = 'pending'"
    )
    .bind(webhook_id)
    .bind(event_seq)
    .fetch_optional(c)
    .await)?)
}

/// The highest attempt number of this event to this endpoint so far.
pub async fn last_attempt(conn: &mut Conn, webhook_id: i64, event_seq: i64) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar(
        "SELECT COALESCE(MAX(attempt), 0) FROM webhook_deliveries WHERE webhook_id = $1 AND event_seq = $2"
    )
    .bind(webhook_id)
    .bind(event_seq)
    .fetch_one(c)
    .await)?)
}

/// Makes a pending attempt due at `due_at` (and free to claim).
pub async fn make_due(conn: &mut Conn, id: i64, due_at: i64) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("UPDATE webhook_deliveries SET due_at = $1, claimed_until = NULL WHERE id = $2")
        .bind(due_at)
        .bind(id)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

/// A claimed attempt: what sending it takes.
#[derive(Clone, Debug, PartialEq, sqlx::FromRow)]
pub struct Claimed {
    pub id: i64,
    pub webhook_id: i64,
    pub event_seq: i64,
    pub attempt: i64,
    pub url: String,
    pub secret: String,
    pub previous_secret: Option<String>,
    pub previous_until: Option<i64>,
    pub event_id: String,
    pub event_type: String,
    pub event_created_at: i64,
    pub data: String,
}

/// Endpoints with attempts due now that no server holds, with how many are due.
pub async fn due_by_endpoint(conn: &mut Conn, now: i64) -> AppResult<Vec<(i64, i64)>> {
    Ok(on_conn!(conn, |c| sqlx::query_as(
        "SELECT d.webhook_id, COUNT(*) FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
         WHERE d.status = 'pending' AND d.due_at <= $1 AND (d.claimed_until IS NULL OR d.claimed_until < $1)
           AND w.enabled = $2
         GROUP BY d.webhook_id"
    )
    .bind(now)
    .bind(true)
    .fetch_all(c)
    .await)?)
}

/// Claims up to `limit` of the endpoint's due attempts until `until`, oldest due first.
pub async fn claim(conn: &mut Conn, webhook_id: i64, now: i64, until: i64, limit: i64) -> AppResult<Vec<Claimed>> {
    let ids: Vec<i64> = on_conn!(conn, |c| sqlx::query_scalar(
        "SELECT id FROM webhook_deliveries
         WHERE webhook_id = $1 AND status = 'pending' AND due_at <= $2 AND (claimed_until IS NULL OR claimed_until < $2)
         ORDER BY due_at, id LIMIT $3"
    )
    .bind(webhook_id)
    .bind(now)
    .bind(limit)
    .fetch_all(c)
    .await)?;
    let mut claimed = Vec::with_capacity(ids.len());
    for id in ids {
        on_conn!(conn, |c| sqlx::query("UPDATE webhook_deliveries SET claimed_until = $1 WHERE id = $2")
            .bind(until)
            .bind(id)
            .execute(c)
            .await
            .map(|done| done.rows_affected()))?;
        let row: Option<Claimed> = on_conn!(conn, |c| {
            sqlx::query_as(
            "SELECT d.id, d.webhook_id, d.event_seq, d.attempt, w.url, w.secret, w.previous_secret, w.previous_until,
                    e.id AS event_id, e.type AS event_type, e.created_at AS event_created_at, e.data
             FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id JOIN events e ON e.seq = d.event_seq
             WHERE d.id = $1"
        )
        .bind(id)
        .fetch_optional(c)
        .await
        })?;
        claimed.extend(row);
    }
    Ok(claimed)
}

/// What an attempt came to.
pub struct Outcome<'a> {
    pub status: &'a str,
    pub attempted_at: i64,
    pub response_status: Option<i64>,
    pub duration_ms: i64,
    pub error: Option<&'a str>,
    /// The start of the endpoint's answer (`services::webhooks::ANSWER_KEPT` bytes).
    pub response_body: Option<&'a str>,
    /// When a retry is due (a failure that is retried).
    pub retry_at: Option<i64>,
}

/// Records an attempt's outcome; `false` when it was no longer pending (finished by
/// another server whose claim had run out, say).
pub async fn finish(conn: &mut Conn, id: i64, outcome: &Outcome<'_>) -> AppResult<bool> {
    let changed = on_conn!(conn, |c| sqlx::query(
        "UPDATE webhook_deliveries SET status = $1, attempted_at = $2, response_status = $3, duration_ms = $4,
             error = $5, due_at = $6, claimed_until = NULL, response_body = $7
         WHERE id = $8 AND status = 'pending'"
    )
    .bind(outcome.status)
    .bind(outcome.attempted_at)
    .bind(outcome.response_status)
    .bind(outcome.duration_ms)
    .bind(outcome.error)
    .bind(outcome.retry_at)
    .bind(outcome.response_body)
    .bind(id)
    .execute(c)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(changed > 0)
}

/// Gives up the endpoint's pending attempts (it was disabled): failed, with why.
pub async fn abandon_pending(conn: &mut Conn, webhook_id: i64, now: i64, why: &str) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query(
        "UPDATE webhook_deliveries SET status = 'failed', attempted_at = $1, error = $2, due_at = NULL,
             claimed_until = NULL
         WHERE webhook_id = $3 AND status = 'pending'"
    )
    .bind(now)
    .bind(why)
    .bind(webhook_id)
    .execute(c)
    .await
    .map(|done| done.rows_affected()))?;
    Ok(())
}

/// The last event whose deliveries were made out.
pub async fn fanned_out(db: &Db) -> AppResult<i64> {
    Ok(on_pool!(db, |pool| sqlx::query_scalar("SELECT last_seq FROM webhook_fanout WHERE id = 1")
        .fetch_one(pool)
        .await)?)
}

pub async fn fanned_out_in(conn: &mut Conn) -> AppResult<i64> {
    Ok(on_conn!(conn, |c| sqlx::query_scalar("SELECT last_seq FROM webhook_fanout WHERE id = 1").fetch_one(c).await)?)
}

pub async fn set_fanned_out(conn: &mut Conn, seq: i64) -> AppResult<()> {
    on_conn!(conn, |c| sqlx::query("UPDATE webhook_fanout SET last_seq = $1 WHERE id = 1")
        .bind(seq)
        .execute(c)
        .await
        .map(|done| done.rows_affected()))?;
    Ok(())
}

/// Pending attempts, and the oldest one's event time (Unix milliseconds).
pub async fn backlog(db: &Db) -> AppResult<(i64, Option<i64>)> {
    Ok(on_pool!(db, |pool| sqlx::query_as(
        "SELECT COUNT(*), MIN(e.created_at) FROM webhook_deliveries d JOIN events e ON e.seq = d.event_seq
         WHERE d.status = 'pending'"
    )
    .fetch_one(pool)
    .await)?)
}
