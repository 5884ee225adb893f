//! The accept loop: one task per connection, a header-read timeout, and caps on open
//! and idle connections so idle or slow clients cannot keep others out.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use axum::Router;

use super::defaults::{
    DEFAULT_HEADER_TIMEOUT_SECS, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_IDLE_PER_CLIENT,
};

/// What clients can hold of the server: slow or idle connections are
/// closed after `header_timeout`, and at most `max_connections` are open at
/// once, the oldest idle one closed for a newcomer; one address holds at
/// most `max_idle_per_client` idle ones, its oldest closed for its newcomer
/// (see [`serve_connections`]). So idle connections cannot starve `/healthz`,
/// and one client's cannot push out another's.
#[derive(Debug, Clone, Copy)]
pub struct ServerLimits {
    pub max_connections: usize,
    pub header_timeout: std::time::Duration,
    pub max_idle_per_client: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: std::time::Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECS),
            max_idle_per_client: DEFAULT_MAX_IDLE_PER_CLIENT,
        }
    }
}

/// Raises this process's open-files limit to its hard limit and returns it
/// (connections are file descriptors); 1024 when it cannot be read.
fn raise_open_files_limit() -> u64 {
    rlimit::increase_nofile_limit(u64::MAX).unwrap_or(1024)
}

/// File descriptors kept for the stores (packs, index files) and the like.
const RESERVED_FDS: u64 = 512;

/// One open connection, as the accept loop sees it.
struct OpenConnection {
    /// The client's address.
    peer: std::net::IpAddr,
    /// When it was accepted.
    opened: Instant,
    /// Set once the connection has sent a whole request.
    served: Arc<std::sync::atomic::AtomicBool>,
    /// Set when the connection task ends.
    closed: Arc<std::sync::atomic::AtomicBool>,
    evict: Arc<tokio::sync::Notify>,
}

/// The accept loop: one task per connection (HTTP/1.1 and HTTP/2), each
/// with a header-read timeout. At most `limits.max_connections` (and no
/// more than the open-files limit allows) are open at once; at the cap a new
/// connection closes the oldest one that never sent a whole request, so idle
/// or half-sent connections cannot keep real clients (and `/healthz`) out.
/// A client (an IP address) at `limits.max_idle_per_client` such connections
/// closes its own oldest for a new one, so a slow or flooding client cycles
/// its own connections instead of pushing out other clients'.
/// Stops accepting at `shutdown` and gives open connections a moment.
pub(super) async fn serve_connections(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: ServerLimits,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let fd_room = raise_open_files_limit()
        .saturating_sub(RESERVED_FDS)
        .max(16);
    let cap = limits.max_connections.clamp(1, fd_room as usize);
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(limits.header_timeout));
    let builder = Arc::new(builder);
    let open = Arc::new(AtomicUsize::new(0));
    let mut oldest_first: std::collections::VecDeque<OpenConnection> = Default::default();
    let (closing_tx, closing_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    let mut sweep = tokio::time::interval(IDLE_SWEEP);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            _ = sweep.tick() => {
                let per_client = limits.max_idle_per_client.max(1);
                evict_idle_over_cap(&mut oldest_first, per_client, None);
                continue;
            }
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: wait, do not spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Forget connections that closed or sent a request; over a
        // client's cap, close its oldest that has not (and has had
        // `IDLE_GRACE` to send it); at the global cap, the oldest of all.
        let peer = peer.ip();
        let per_client = limits.max_idle_per_client.max(1);
        // (Room for the newcomer: its client keeps at most `per_client`.)
        evict_idle_over_cap(&mut oldest_first, per_client - 1, Some(peer));
        if open.load(Ordering::Relaxed) >= cap {
            if let Some(victim) = oldest_first.pop_front() {
                victim.evict.notify_one();
            }
        }
        let _ = stream.set_nodelay(true);
        let served = Arc::new(AtomicBool::new(false));
        let closed = Arc::new(AtomicBool::new(false));
        let evict = Arc::new(tokio::sync::Notify::new());
        oldest_first.push_back(OpenConnection {
            peer,
            opened: Instant::now(),
            served: served.clone(),
            closed: closed.clone(),
            evict: evict.clone(),
        });
        open.fetch_add(1, Ordering::Relaxed);
        let app = app.clone();
        let flag = served.clone();
        let service =
            hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                flag.store(true, Ordering::Relaxed);
                tower::ServiceExt::oneshot(app.clone(), req.map(axum::body::Body::new))
            });
        let builder = builder.clone();
        let mut closing = closing_rx.clone();
        let open_count = open.clone();
        connections.spawn(async move {
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = evict.notified() => {}
                _ = closing.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), conn).await;
                }
            }
            closed.store(true, Ordering::Relaxed);
            open_count.fetch_sub(1, Ordering::Relaxed);
        });
        // Reap finished connection tasks so the set stays small.
        while connections.try_join_next().is_some() {}
    }
    let _ = closing_tx.send(true);
    drop(listener);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(6), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    Ok(())
}

/// How long a new connection has to send its first request before it
/// counts against its client's idle cap: a connection pool (a reverse
/// proxy, a load generator) opening many connections at once from one
/// address has each send its request well within it, so none is closed.
const IDLE_GRACE: Duration = Duration::from_secs(2);

/// How often idle connections over their client's cap are looked for.
const IDLE_SWEEP: Duration = Duration::from_millis(250);

/// Drops closed and served connections from `oldest_first`, then closes,
/// for each client (or only `only`), its oldest idle connections past
/// `per_client`, among those open for longer than [`IDLE_GRACE`].
fn evict_idle_over_cap(
    oldest_first: &mut std::collections::VecDeque<OpenConnection>,
    per_client: usize,
    only: Option<std::net::IpAddr>,
) {
    use std::sync::atomic::Ordering;
    // Only the clients looked at are counted: on accept that is one, so
    // the map has one entry however many clients are connected.
    let mut idle: HashMap<std::net::IpAddr, usize> = HashMap::new();
    oldest_first.retain(|c| {
        let open = !c.closed.load(Ordering::Relaxed) && !c.served.load(Ordering::Relaxed);
        if open && only.is_none_or(|o| o == c.peer) {
            *idle.entry(c.peer).or_default() += 1;
        }
        open
    });
    let mut excess: HashMap<std::net::IpAddr, usize> = idle
        .into_iter()
        .filter(|(_, n)| *n > per_client)
        .map(|(peer, n)| (peer, n - per_client))
        .collect();
    if excess.is_empty() {
        return;
    }
    oldest_first.retain(|c| {
        let Some(left) = excess.get_mut(&c.peer) else {
            return true;
        };
        if *left == 0 || c.opened.elapsed() < IDLE_GRACE {
            return true;
        }
        *left -= 1;
        c.evict.notify_one();
        false
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    /// An idle connection of `peer` opened past its grace.
    fn idle(peer: IpAddr) -> OpenConnection {
        OpenConnection {
            peer,
            opened: Instant::now() - IDLE_GRACE - Duration::from_secs(1),
            served: Default::default(),
            closed: Default::default(),
            evict: Default::default(),
        }
    }

    fn held(q: &std::collections::VecDeque<OpenConnection>, peer: IpAddr) -> usize {
        q.iter().filter(|c| c.peer == peer).count()
    }

    #[test]
    fn an_accept_closes_only_its_own_clients_idle_connections_a_sweep_every_clients() {
        let (a, b) = (IpAddr::from([10, 0, 0, 1]), IpAddr::from([10, 0, 0, 2]));
        let mut q: std::collections::VecDeque<_> = [a, b, a, b, a, b].map(idle).into();
        let newest_of_a = q[4].evict.clone();
        evict_idle_over_cap(&mut q, 1, Some(a));
        assert_eq!((held(&q, a), held(&q, b)), (1, 3));
        assert!(
            q.iter().any(|c| Arc::ptr_eq(&c.evict, &newest_of_a)),
            "the oldest are closed first"
        );
        evict_idle_over_cap(&mut q, 1, None);
        assert_eq!((held(&q, a), held(&q, b)), (1, 1));
    }
}
