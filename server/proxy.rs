//! Serving the route behind the owner's tunnel or reverse proxy: a plain-HTTP listener on a
//! loopback port, which the tunnel (Tailscale Funnel, Cloudflare Tunnel, a reverse proxy) forwards
//! to after terminating TLS at its public name. There is no certificate and nothing to check on a
//! schedule; the route records that it serves every minute, so that `journal route list` in another
//! process can tell a running server from one that was killed.

use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::app::AppState;
use crate::clock::unix_now;
use crate::config::ProxyPlan;
use crate::context::{PROXY, Route};
use crate::listener::{ConnectionLimits, Gate, accept_loop};
use crate::routes;
use crate::routes::status;

/// How often the route records that it still serves.
const RECORD_INTERVAL: Duration = Duration::from_secs(60);

/// The route of `plan`, as its handlers know it.
pub fn route(plan: &ProxyPlan) -> Route {
    Route::proxy(&plan.hostname, plan.public_port, plan.listen)
}

/// Listens on the route's loopback address and serves it until `stop`.
pub async fn start(
    state: AppState,
    plan: ProxyPlan,
    limits: ConnectionLimits,
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<JoinHandle<()>> {
    let listener = TcpListener::bind(plan.listen).await?;
    let route = route(&plan);
    let router = routes::proxy::router(state.clone(), route.clone());
    let serving = tokio::spawn(accept_loop(listener, router, limits, stop.clone(), Gate::Plain));
    tracing::info!(
        "the proxy route listens on {} for the tunnel to {}",
        plan.listen,
        route.mcp_url()
    );
    state.routes.set_proxy(Some(route.mcp_url()));
    Ok(tokio::spawn(async move {
        let mut tick = tokio::time::interval(RECORD_INTERVAL);
        let mut rechecks = state.routes.rechecks();
        while status::next_turn(&mut tick, &mut rechecks, &mut stop).await {
            let recorded = status::record_serving(&state.journal.db, PROXY, &[plan.listen], None, unix_now()).await;
            if let Err(error) = recorded {
                tracing::warn!(%error, "could not record the proxy route's state");
            }
        }
        let _ = serving.await;
        state.routes.set_proxy(None);
        if let Err(error) = status::record_stopped(&state.journal.db, PROXY, unix_now()).await {
            tracing::warn!(%error, "could not record that the proxy route stopped");
        }
    }))
}
