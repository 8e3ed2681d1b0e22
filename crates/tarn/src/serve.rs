//! `tarn serve`: the MySQL protocol server on the embedded engine.
//!
//! Settings, lowest precedence first: defaults; the TOML file of `--config`;
//! command-line flags (`--data-dir`, `--bind`, `--port`, `--set name=value`);
//! then `SET GLOBAL` while running, which lasts until restart. Engine settings
//! (`tarn settings`) configure the storage engine when it opens; every other name is
//! a MySQL system variable (`max_connections`, `wait_timeout`, `ssl_cert`, ...)
//! applied to the engine's globals before the first connection.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tarn_common::config::StartupSettings;
use tarn_common::{Error, Result};
use tarn_server::server::{Shared, serve};
use tarn_server::tls::{CertificateSource, server_config};

/// What `tarn serve` was asked for.
pub struct ServeOptions {
    pub config: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    pub bind: Option<String>,
    pub port: Option<u16>,
    /// `--set name=value`, engine settings and system variables alike.
    pub assignments: Vec<String>,
}

pub fn run(options: ServeOptions) -> Result<()> {
    let mut assignments = options.assignments.clone();
    if let Some(dir) = &options.data_dir {
        assignments.push(format!("data_dir={}", dir.display()));
    }
    if let Some(bind) = &options.bind {
        assignments.push(format!("bind_address={bind}"));
    }
    if let Some(port) = options.port {
        assignments.push(format!("port={port}"));
    }
    let startup = StartupSettings::resolve(
        options.config.as_deref(),
        assignments.iter().map(String::as_str),
    )?;
    let settings = startup.settings;
    settings.validate()?;
    let engine = tarn_sql::Engine::open(&settings)?;
    engine.set_globals(&startup.variables)?;
    let bind = engine.global_str("bind_address");
    let port = u16::try_from(engine.global_u64("port")).unwrap_or(3306);
    let (cert, key) = (engine.global_str("ssl_cert"), engine.global_str("ssl_key"));
    let source = match (cert.is_empty(), key.is_empty()) {
        (false, false) => CertificateSource::Files {
            cert: cert.into(),
            key: key.into(),
        },
        (true, true) if engine.global_bool("auto_generate_certs") => CertificateSource::Generated {
            dir: settings.data_dir.clone(),
        },
        (true, true) => CertificateSource::None,
        _ => {
            return Err(Error::InvalidSetting {
                name: "ssl_cert".into(),
                value: cert,
                reason: "ssl_cert and ssl_key go together".into(),
            });
        }
    };
    let tls = server_config(&source)?;
    let tls_on = tls.is_some();
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .max_blocking_threads(tarn_server::limits::STATEMENT_THREADS_MAX)
        .thread_name("tarn-net")
        .enable_all()
        .build()
        .map_err(|e| Error::OutOfResources(format!("starting the network runtime: {e}")))?;
    let shared = Shared::new(engine.clone(), tls, cores, runtime.handle().clone())
        .map_err(|e| Error::OutOfResources(format!("starting the statement runners: {e}")))?;
    // The SQL statement SHUTDOWN (and COM_SHUTDOWN) stops the server as SIGTERM does.
    let shutdown_requested = Arc::new(tokio::sync::Notify::new());
    let notify = shutdown_requested.clone();
    engine.on_shutdown_request(Box::new(move || notify.notify_one()));
    runtime.block_on(async {
        let address = format!("{bind}:{port}");
        let listener = tokio::net::TcpListener::bind(&address).await.map_err(|e| {
            Error::sql(
                2002,
                "HY000",
                format!("Can't listen on {address}: {e} (is another server using the port? `--port N` picks another)"),
            )
        })?;
        let local: SocketAddr = listener
            .local_addr()
            .map_err(|e| Error::OutOfResources(e.to_string()))?;
        eprintln!(
            "Tarn {} ready for connections on {local} (data dir {}, TLS {}).\nConnect with: mariadb -h {} -P {} -u root",
            tarn_sql::sysvars::SERVER_VERSION,
            settings.data_dir.display(),
            if tls_on { "on" } else { "off" },
            local.ip(),
            local.port(),
        );
        let shutdown = shutdown_signal(shutdown_requested);
        serve(shared.clone(), listener, shutdown, Duration::from_secs(30)).await;
        eprintln!("Tarn: shutting down");
        Ok::<(), Error>(())
    })?;
    runtime.shutdown_timeout(Duration::from_secs(5));
    drop(shared);
    // The last reference: the storage engine flushes and closes.
    if let Ok(engine) = Arc::try_unwrap(engine) {
        drop(engine);
    }
    Ok(())
}

/// Completes on Ctrl-C, SIGTERM or a client's SHUTDOWN.
async fn shutdown_signal(requested: Arc<tokio::sync::Notify>) {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = requested.notified() => {}
            }
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
        () = requested.notified() => {}
    }
}
