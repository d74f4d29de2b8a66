//! The layers routes put around their endpoints: the route's guard (Host and Origin rules, which
//! answer a refusal or let the request through), the CORS headers of the endpoints that
//! browser-based clients call, and on the proxy route the client's address as the tunnel reported it.
//!
//! Written as tower layers rather than axum's `middleware::from_fn` and `map_response`, which box
//! the rest of the router and their own future for every request: on a `ping` those allocations
//! and indirect calls were a few hundredths of the server's CPU. These add none.

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use futures_util::FutureExt;
use futures_util::future::{Either, Map, Ready, ready};
use tower_layer::Layer;
use tower_service::Service;

use crate::context::Forwarded;

/// Lets through the requests `check` finds nothing to refuse in, and answers the others with the
/// refusal it returns. Every route's guard first refuses a request with more than one `Host`
/// (`crate::context::host::repeated_host`): each check reads the first, and something in front might read another.
#[derive(Clone)]
pub struct Guard<C>(pub C);

impl<S, C: Clone> Layer<S> for Guard<C> {
    type Service = Guarded<S, C>;

    fn layer(&self, inner: S) -> Guarded<S, C> {
        Guarded {
            inner,
            check: self.0.clone(),
        }
    }
}

/// A service behind a [`Guard`].
#[derive(Clone)]
pub struct Guarded<S, C> {
    inner: S,
    check: C,
}

impl<S, C> Service<Request> for Guarded<S, C>
where
    S: Service<Request, Response = Response, Error = Infallible>,
    C: Fn(&Request) -> Option<Response>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<Ready<Result<Response, Infallible>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        match crate::context::host::repeated_host(request.headers()).or_else(|| (self.check)(&request)) {
            Some(refusal) => Either::Left(ready(Ok(refusal))),
            None => Either::Right(self.inner.call(request)),
        }
    }
}

/// Puts on each request the client's address as a forwarder on loopback reported it
/// (`context::Forwarded`), for the per-source quotas: the proxy route's requests all come from
/// the owner's tunnel.
#[derive(Clone, Copy)]
pub struct TrustForwarder;

impl<S> Layer<S> for TrustForwarder {
    type Service = Forwarding<S>;

    fn layer(&self, inner: S) -> Forwarding<S> {
        Forwarding(inner)
    }
}

/// A service behind [`TrustForwarder`].
#[derive(Clone)]
pub struct Forwarding<S>(S);

impl<S> Service<Request> for Forwarding<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request) -> Self::Future {
        let peer = request
            .extensions()
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|info| info.0.ip());
        if let Some(forwarded) = peer.and_then(|peer| Forwarded::of(peer, request.headers())) {
            request.extensions_mut().insert(forwarded);
        }
        self.0.call(request)
    }
}

/// Adds to every response the headers that let any web origin read it (the endpoints a browser-based
/// client calls from its own page; what authorizes those calls is a bearer token, never a cookie).
#[derive(Clone, Copy)]
pub struct AnyOrigin;

impl<S> Layer<S> for AnyOrigin {
    type Service = ToAnyOrigin<S>;

    fn layer(&self, inner: S) -> ToAnyOrigin<S> {
        ToAnyOrigin(inner)
    }
}

/// A service behind [`AnyOrigin`].
#[derive(Clone)]
pub struct ToAnyOrigin<S>(S);

type Answer = Result<Response, Infallible>;

impl<S> Service<Request> for ToAnyOrigin<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Map<S::Future, fn(Answer) -> Answer>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        self.0.call(request).map(allow_any_origin as fn(Answer) -> Answer)
    }
}

fn allow_any_origin(answer: Answer) -> Answer {
    let Ok(mut response) = answer;
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("mcp-session-id, www-authenticate"),
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::{HeaderValue, StatusCode};
    use axum::response::IntoResponse;
    use axum::routing::get;

    use super::*;

    /// A router behind a guard that refuses requests naming `refuse` in their path, and behind
    /// `AnyOrigin`.
    fn guarded() -> Router {
        Router::new()
            .route("/ok", get(|| async { "fine" }))
            .route("/refuse", get(|| async { "should not run" }))
            .layer(AnyOrigin)
            .layer(Guard(|request: &Request| {
                (request.uri().path() == "/refuse").then(|| StatusCode::FORBIDDEN.into_response())
            }))
    }

    async fn answer(hosts: &[&str], path: &str) -> Response {
        let mut request = Request::builder().uri(path).body(Body::empty()).unwrap();
        for host in hosts {
            request
                .headers_mut()
                .append(header::HOST, HeaderValue::from_str(host).unwrap());
        }
        guarded().call(request).await.unwrap()
    }

    #[tokio::test]
    async fn the_guard_lets_through_refuses_and_refuses_a_repeated_host_first() {
        let through = answer(&["127.0.0.1:7659"], "/ok").await;
        assert_eq!(through.status(), StatusCode::OK);
        assert_eq!(through.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
        assert_eq!(
            through.headers()[header::ACCESS_CONTROL_EXPOSE_HEADERS],
            "mcp-session-id, www-authenticate"
        );
        let refused = answer(&["127.0.0.1:7659"], "/refuse").await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        assert!(
            !refused.headers().contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN),
            "a refusal never reached the layers behind the guard"
        );
        for path in ["/ok", "/refuse"] {
            let repeated = answer(&["127.0.0.1:7659", "evil.example"], path).await;
            assert_eq!(repeated.status(), StatusCode::BAD_REQUEST, "{path}");
        }
    }
}
