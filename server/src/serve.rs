//! How `main` hands connections to the application: one copy of it per connection,
//! called in place for each of the connection's requests.
//!
//! hyper calls a service through `&self`, so axum's server clones the service it was
//! given for every request (a tower service is called through `&mut self`). With the
//! whole application boxed behind its layers, that clone copied every layer's settings
//! and bumped every shared count in it (the same counts from both cores), about 1,300
//! of a cached read's instructions and an allocation (docs/PERFORMANCE.md, "What
//! changed"). Here the per-request clone is a count of this connection's own: the
//! copy is made once, when the connection is accepted, and an HTTP/1 connection's
//! requests are answered one after another, so its lock is never contended.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use axum::extract::{ConnectInfo, Request};
use axum::response::Response;
use axum::serve::{IncomingStream, Listener};
use tower::Service;

use crate::HttpService;

/// Makes the service of each accepted connection: `app`'s own copy, which tells each
/// request the client's address (`ConnectInfo`, as axum's
/// `into_make_service_with_connect_info` does).
pub struct Connections<S> {
    app: S,
}

pub fn connections<S: HttpService>(app: S) -> Connections<S> {
    Connections { app }
}

impl<S, L> Service<IncomingStream<'_, L>> for Connections<S>
where
    S: HttpService,
    L: Listener<Addr = SocketAddr>,
{
    type Response = Connection<S>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Connection<S>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, stream: IncomingStream<'_, L>) -> Self::Future {
        let app = Arc::new(Mutex::new(self.app.clone()));
        std::future::ready(Ok(Connection { app, peer: *stream.remote_addr() }))
    }
}

/// One connection's copy of the application (cloned for each request by the server:
/// a count, not the application).
#[derive(Clone)]
pub struct Connection<S> {
    app: Arc<Mutex<S>>,
    peer: SocketAddr,
}

impl<S> Connection<S> {
    /// The copy, whatever a request that panicked in it left: services of settings and
    /// counts, which a panic cannot leave half-changed.
    fn app(&self) -> MutexGuard<'_, S> {
        self.app.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<S: HttpService> Service<Request> for Connection<S> {
    type Response = Response;
    type Error = Infallible;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.app().poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        request.extensions_mut().insert(ConnectInfo(self.peer));
        self.app().call(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::body::Body;
    use http_body_util::BodyExt;
    use hyper_util::rt::TokioIo;

    /// An application that counts its copies and answers with the client's address.
    struct Counted(Arc<AtomicUsize>);

    impl Clone for Counted {
        fn clone(&self) -> Counted {
            self.0.fetch_add(1, Ordering::SeqCst);
            Counted(self.0.clone())
        }
    }

    impl Service<Request> for Counted {
        type Response = Response;
        type Error = Infallible;
        type Future = std::future::Ready<Result<Response, Infallible>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: Request) -> Self::Future {
            let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|info| info.0.to_string());
            std::future::ready(Ok(Response::new(Body::from(peer.unwrap_or_default()))))
        }
    }

    /// `count` requests on one new connection: what each answered.
    async fn on_one_connection(addr: SocketAddr, count: usize) -> (SocketAddr, Vec<String>) {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let local = stream.local_addr().unwrap();
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream)).await.unwrap();
        tokio::spawn(connection);
        let mut answers = Vec::new();
        for _ in 0..count {
            let request = axum::http::Request::get("/").header("host", "test").body(Body::empty()).unwrap();
            let response = sender.send_request(request).await.unwrap();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            answers.push(String::from_utf8(body.to_vec()).unwrap());
        }
        (local, answers)
    }

    #[tokio::test]
    async fn the_application_is_copied_once_a_connection_and_told_the_client() {
        let copies = Arc::new(AtomicUsize::new(0));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = connections(Counted(copies.clone()));
        tokio::spawn(async move { axum::serve(listener, app).await });

        let (first, first_answers) = on_one_connection(addr, 3).await;
        let (second, second_answers) = on_one_connection(addr, 2).await;
        assert_eq!(first_answers, vec![first.to_string(); 3]);
        assert_eq!(second_answers, vec![second.to_string(); 2]);
        // Five requests on two connections: one copy each (served by axum's
        // `into_make_service_with_connect_info`, seven: one more for each request).
        assert_eq!(copies.load(Ordering::SeqCst), 2);
    }
}
