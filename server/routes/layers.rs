//! The two layers every route puts around its endpoints: the route's guard (Host and Origin rules,
//! which answer a refusal or let the request through) and the CORS headers of the endpoints that
//! browser-based clients call.
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

/// Lets through the requests `check` finds nothing to refuse in, and answers the others with the
/// refusal it returns.
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
        match (self.check)(&request) {
            Some(refusal) => Either::Left(ready(Ok(refusal))),
            None => Either::Right(self.inner.call(request)),
        }
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
