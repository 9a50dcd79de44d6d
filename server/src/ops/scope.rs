//! What the layers of one request share while it runs, kept in a task-local rather
//! than in the request's extensions (each insert there allocates and grows a map, on
//! every request): when it arrived, for the body's deadline, and which of the site's
//! routes matched, for the metrics.

use std::cell::RefCell;
use std::future::Future;

use axum::extract::MatchedPath;
use axum::http::HeaderValue;
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
pub async fn within<F: Future>(
    arrived: Instant,
    id: Option<HeaderValue>,
    answer: F,
) -> (F::Output, Option<MatchedPath>) {
    let scope = RequestScope { arrived, route: RefCell::new(None) };
    let answer = REQUEST.scope(scope, async {
        let output = answer.await;
        (output, REQUEST.with(|scope| scope.route.take()))
    });
    app::request_id::within(id, answer).await
}

/// When the request arrived (now, outside a request's scope).
pub fn arrived() -> Instant {
    REQUEST.try_with(|scope| scope.arrived).unwrap_or_else(|_| Instant::now())
}

/// The route the site's router matched (see `metrics::note_route`).
pub fn note_route(route: MatchedPath) {
    let _ = REQUEST.try_with(|scope| *scope.route.borrow_mut() = Some(route));
}
