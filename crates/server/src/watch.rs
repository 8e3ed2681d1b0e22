//! Notices clients that disconnect while the runners hold their socket, and runners
//! that are all stuck.
//!
//! The runners read and write a busy connection's socket themselves
//! (`crate::runners`), so no network task watches it while a statement runs, and a
//! statement that writes nothing (a long UPDATE, a lock wait) would otherwise run to
//! its end for a client that is gone. The watch thread looks, every
//! `WATCH_INTERVAL_MS`, at the connections whose statement has run for a whole
//! interval or more, and asks the kernel whether the client closed its side
//! ([`tarn_io::os::peer_closed`], a zero-timeout poll that reads nothing). For a
//! client that did, it kills the statement as KILL QUERY does; the statement's
//! rollback, and the connection's end that follows, release its locks. Each round
//! also runs the runners' own ([`Runners::watch_round`]): quiet, killed and
//! shut-down connections go back, and a runner starts if none took a ready
//! connection since the last round.
//!
//! Cost on the statement path: two relaxed atomic stores per statement (its start
//! tick, then zero), and one mutex round trip each time the runners take or give
//! back a connection. Invariants: an entry exists exactly while its
//! [`Watched`] guard lives, so the watch never polls a socket a connection no longer
//! holds (each entry owns a duplicate of the descriptor, so a reused descriptor
//! number is never polled by mistake); entries are bounded by open connections.

use std::collections::HashMap;
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::Mutex;
use tarn_sql::Engine;

use crate::limits::WATCH_INTERVAL_MS;
use crate::runners::Runners;

/// The connections whose runners hold their sockets.
pub struct Watch {
    /// Rounds of the watch thread so far: a statement stamps the round it began in.
    tick: AtomicU64,
    entries: Mutex<HashMap<u64, Entry>>,
}

struct Entry {
    socket: TcpStream,
    /// 0 between statements, else 1 + the tick the running statement began in.
    busy: Arc<AtomicU64>,
}

/// A connection's place in the watch, while the runners hold its socket.
pub struct Watched {
    watch: Arc<Watch>,
    id: u64,
    busy: Arc<AtomicU64>,
}

impl Watch {
    /// A watch and its thread, which ends once the watch or the engine is dropped.
    /// Each round also runs [`Runners::watch_round`].
    pub fn start(engine: &Arc<Engine>, runners: Weak<Runners>) -> Arc<Watch> {
        let watch = Arc::new(Watch {
            tick: AtomicU64::new(0),
            entries: Mutex::new(HashMap::new()),
        });
        let weak_watch = Arc::downgrade(&watch);
        let weak_engine = Arc::downgrade(engine);
        let spawned = std::thread::Builder::new()
            .name("tarn-watch".into())
            .spawn(move || watch_loop(&weak_watch, &weak_engine, &runners));
        if let Err(e) = spawned {
            // The server still works; only disconnects go unnoticed until a write.
            tracing::error!("could not start the disconnect watch thread: {e}");
        }
        watch
    }

    /// Watches connection `id` over `socket` until the guard is dropped; `None` if
    /// the descriptor could not be duplicated (the connection then goes unwatched).
    pub fn register(self: &Arc<Self>, id: u64, socket: &TcpStream) -> Option<Watched> {
        let socket = socket.try_clone().ok()?;
        let busy = Arc::new(AtomicU64::new(0));
        self.entries.lock().insert(
            id,
            Entry {
                socket,
                busy: busy.clone(),
            },
        );
        Some(Watched {
            watch: self.clone(),
            id,
            busy,
        })
    }

    /// One round: kills the statements of clients that closed their side.
    fn round(&self, engine: &Engine) {
        let tick = self.tick.fetch_add(1, Ordering::Relaxed) + 1;
        let entries = self.entries.lock();
        for (&id, entry) in entries.iter() {
            let busy = entry.busy.load(Ordering::Relaxed);
            // Began at tick `busy - 1`: a whole interval has passed by `busy + 1`.
            if busy != 0 && tick > busy && tarn_io::os::peer_closed(&entry.socket) {
                tracing::debug!("connection {id}: the client went away; stopping its statement");
                // An error means the session ended meanwhile: nothing to stop.
                let _ = engine.kill(id, false);
            }
        }
    }

    #[cfg(test)]
    fn watched(&self) -> usize {
        self.entries.lock().len()
    }
}

impl Watched {
    /// A statement starts: from the next round on, its client is watched.
    pub fn statement_started(&self) {
        let tick = self.watch.tick.load(Ordering::Relaxed);
        self.busy.store(tick + 1, Ordering::Relaxed);
    }

    /// The statement ended: its client is no longer watched.
    pub fn statement_ended(&self) {
        self.busy.store(0, Ordering::Relaxed);
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        self.watch.entries.lock().remove(&self.id);
    }
}

fn watch_loop(watch: &Weak<Watch>, engine: &Weak<Engine>, runners: &Weak<Runners>) {
    let interval = Duration::from_millis(WATCH_INTERVAL_MS);
    loop {
        std::thread::sleep(interval);
        let (Some(watch), Some(engine)) = (watch.upgrade(), engine.upgrade()) else {
            return;
        };
        watch.round(&engine);
        if let Some(runners) = runners.upgrade() {
            runners.watch_round();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_holds_its_entry_and_a_closed_peer_is_seen() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
        let client =
            TcpStream::connect(listener.local_addr().expect("an address")).expect("connects");
        let (server_side, _) = listener.accept().expect("accepts");
        let watch = Arc::new(Watch {
            tick: AtomicU64::new(0),
            entries: Mutex::new(HashMap::new()),
        });
        let guard = watch.register(7, &server_side).expect("registers");
        assert_eq!(watch.watched(), 1);
        assert!(!tarn_io::os::peer_closed(&server_side));
        drop(client);
        // The FIN arrives over loopback at once, but give it a moment.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !tarn_io::os::peer_closed(&server_side) {
            assert!(
                std::time::Instant::now() < deadline,
                "the closed peer is never seen"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(guard);
        assert_eq!(watch.watched(), 0);
    }
}
