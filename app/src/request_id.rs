//! The id of the request being answered (its `X-Request-Id`), for the lines logged
//! while answering it: the server sets it around each request (`server::ops::scope`)
//! and an internal error's line names it, as the request's own line does. A task-local
//! rather than a tracing span: a span per request was most of what the request log
//! cost (docs/PERFORMANCE.md, "What the request log costs").
//!
//! A task-local stays with its task: work a request hands to another task carries the
//! id over with `carried` (the write queue's jobs, a transaction's commit, and what
//! Leptos spawns while rendering a page: `server::ops::scope::RequestExecutor`), and
//! work it hands to a blocking thread with `carried_blocking` (a photo's encoding).

use std::future::Future;

use axum::http::HeaderValue;

tokio::task_local! {
    static CURRENT: Option<HeaderValue>;
}

/// Runs `answer` as the request `id`'s.
pub fn within<F: Future>(id: Option<HeaderValue>, answer: F) -> impl Future<Output = F::Output> {
    CURRENT.scope(id, answer)
}

/// `work`, to run on another task as this task's request (if it answers one): the id
/// is taken now, on this task.
pub fn carried<F: Future>(work: F) -> impl Future<Output = F::Output> {
    within(id(), work)
}

/// `work`, to run on a blocking thread (`spawn_blocking`) as this task's request: the
/// id is taken now, on this task, and set around `work` on the thread that runs it.
pub fn carried_blocking<R>(work: impl FnOnce() -> R) -> impl FnOnce() -> R {
    let id = id();
    move || CURRENT.sync_scope(id, work)
}

/// The id of the request this task answers, as it came.
pub fn id() -> Option<HeaderValue> {
    CURRENT.try_with(Clone::clone).ok().flatten()
}

/// The id of the request this task answers, if any (and printable).
pub fn current() -> Option<String> {
    id().and_then(|id| id.to_str().ok().map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_id_goes_with_work_handed_to_another_task_or_a_blocking_thread() {
        let id = Some(HeaderValue::from_static("find-me-9"));
        let (spawned, blocking) = within(id, async {
            let spawned = tokio::spawn(carried(async { current() }));
            let blocking = tokio::task::spawn_blocking(carried_blocking(current));
            (spawned.await.unwrap(), blocking.await.unwrap())
        })
        .await;
        assert_eq!(spawned.as_deref(), Some("find-me-9"));
        assert_eq!(blocking.as_deref(), Some("find-me-9"));
        // And none without: a bare spawn_blocking knows no request.
        let bare =
            within(Some(HeaderValue::from_static("x")), async { tokio::task::spawn_blocking(current).await.unwrap() })
                .await;
        assert_eq!(bare, None);
    }
}
