//! What the layers of one request share while it runs, kept in a task-local rather
//! than in the request's extensions (each insert there allocates and grows a map, on
//! every request): when it arrived, for the body's deadline, and which of the site's
//! routes matched, for the metrics.

use std::cell::RefCell;
use std::future::Future;

use axum::extract::MatchedPath;
use axum::http::HeaderValue;
use futures_util::FutureExt;
use tokio::time::Instant;

struct RequestScope {
    arrived: Instant,
    route: RefCell<Option<MatchedPath>>,
}

tokio::task_local! {
    static REQUEST: RequestScope;
}

/// Runs `answer` (the rest of the request's handling) with its scope, and as the
/// request `id`'s for the lines it logs (`app::request_id`).
/// (Combinators rather than `async`, which would hold `answer` twice: see `ops::EveryRequest`.)
pub fn within<F: Future>(
    arrived: Instant,
    id: Option<HeaderValue>,
    answer: F,
) -> impl Future<Output = (F::Output, Option<MatchedPath>)> {
    let scope = RequestScope { arrived, route: RefCell::new(None) };
    let answer = answer.map(|output| (output, REQUEST.with(|scope| scope.route.take())));
    app::request_id::within(id, REQUEST.scope(scope, answer))
}

/// When the request arrived (now, outside a request's scope).
pub fn arrived() -> Instant {
    REQUEST.try_with(|scope| scope.arrived).unwrap_or_else(|_| Instant::now())
}

/// The route the site's router matched (see `metrics::note_route`).
pub fn note_route(route: MatchedPath) {
    let _ = REQUEST.try_with(|scope| *scope.route.borrow_mut() = Some(route));
}

/// Leptos's executor: tokio's, as `leptos_axum` would set, but a task spawned while
/// answering a request (a page's data, say) answers it too, so the lines it logs name
/// the request (`app::request_id::carried`).
struct RequestExecutor;

impl any_spawner::CustomExecutor for RequestExecutor {
    fn spawn(&self, work: any_spawner::PinnedFuture<()>) {
        tokio::spawn(app::request_id::carried(work));
    }

    fn spawn_local(&self, work: any_spawner::PinnedLocalFuture<()>) {
        tokio::task::spawn_local(app::request_id::carried(work));
    }

    fn poll_local(&self) {}
}

/// Sets `RequestExecutor` as Leptos's executor, before Leptos sets its own (the first
/// setting wins; Leptos's own later attempts change nothing). Once per process.
pub fn init_executor() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if any_spawner::Executor::init_custom_executor(RequestExecutor).is_err() {
            tracing::warn!("Leptos's executor was set before ours: its tasks' log lines will not name their request");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn what_leptos_spawns_for_a_request_is_that_requests() {
        init_executor();
        let (told, heard) = tokio::sync::oneshot::channel();
        within(Instant::now(), Some(HeaderValue::from_static("find-me-3")), async move {
            // As Leptos spawns a page's data: through its own spawner.
            leptos::task::spawn(async move {
                let _ = told.send(app::request_id::current());
            });
        })
        .await;
        assert_eq!(heard.await.unwrap().as_deref(), Some("find-me-3"));
    }
}
