//! The listener: accepts connections and shares what they have in common.
//!
//! The network runs on a tokio runtime with one thread per core; each accepted
//! socket becomes a task running [`crate::connection::run`]. `max_connections` is
//! checked at accept (error 1040), and shutdown stops accepting, lets running
//! statements finish, and closes idle connections within a second.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tarn_sql::Engine;
use tokio::net::TcpListener;

use crate::runners::Runners;
use crate::send::EncodePool;
use crate::watch::Watch;

/// What every connection shares.
pub struct Shared {
    pub engine: Arc<Engine>,
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    pub encoders: Arc<EncodePool>,
    /// Plain-TCP connections whose runners hold their sockets.
    pub watch: Arc<Watch>,
    /// The threads that run plain-TCP connections' statements.
    pub runners: Arc<Runners>,
    /// Open connections (authenticated or not).
    pub connections: AtomicU64,
    pub shutting_down: AtomicBool,
    /// caching_sha2_password accounts that passed the full path since start (the
    /// cache MySQL keeps; over TLS, the first login of an account takes the full
    /// path).
    pub sha2_full_auth_done: Mutex<HashSet<(String, String)>>,
}

impl Shared {
    /// What connections share; `runtime` is the one the server runs on (its
    /// blocking pool runs the statements).
    pub fn new(
        engine: Arc<Engine>,
        tls: Option<Arc<rustls::ServerConfig>>,
        encode_threads: usize,
        runtime: tokio::runtime::Handle,
    ) -> std::io::Result<Arc<Shared>> {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let runners = Runners::new(runtime, cores)?;
        engine
            .storage()
            .set_log_progress_hook(Some(runners.log_progress_hook()));
        let reported = Arc::downgrade(&runners);
        engine.set_runner_report(Box::new(move || {
            reported.upgrade().map(|r| r.status()).unwrap_or_default()
        }));
        Ok(Arc::new(Shared {
            watch: Watch::start(&engine, Arc::downgrade(&runners)),
            runners,
            engine,
            tls: tls.map(tokio_rustls::TlsAcceptor::from),
            encoders: EncodePool::new(encode_threads),
            connections: AtomicU64::new(0),
            shutting_down: AtomicBool::new(false),
            sha2_full_auth_done: Mutex::new(HashSet::new()),
        }))
    }

    /// Seconds to wait for the rest of a packet once it started (`net_read_timeout`).
    pub fn net_read_timeout_s(&self) -> u64 {
        self.engine.global_u64("net_read_timeout").max(1)
    }
}

/// Accepts connections on `listener` until `shutdown` completes, then waits (up to
/// `drain_timeout`) for open connections to end.
pub async fn serve(
    shared: Arc<Shared>,
    listener: TcpListener,
    shutdown: impl std::future::Future<Output = ()>,
    drain_timeout: Duration,
) {
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, peer)) => {
                    let shared = shared.clone();
                    shared.connections.fetch_add(1, Ordering::Relaxed);
                    tokio::spawn(async move {
                        crate::connection::run(shared.clone(), socket, peer).await;
                        shared.connections.fetch_sub(1, Ordering::Relaxed);
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait, don't spin.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    shared.shutting_down.store(true, Ordering::Relaxed);
    let deadline = tokio::time::Instant::now() + drain_timeout;
    while shared.connections.load(Ordering::Relaxed) > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
