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

use tarn_common::settings::{SETTINGS, Settings};
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

fn is_engine_setting(name: &str) -> bool {
    SETTINGS.iter().any(|s| s.name.eq_ignore_ascii_case(name))
}

fn split_assignment(text: &str) -> Result<(String, String)> {
    let (name, value) = text.split_once('=').ok_or_else(|| Error::InvalidSetting {
        name: text.to_string(),
        value: String::new(),
        reason: "expected NAME=VALUE".to_string(),
    })?;
    Ok((name.trim().to_ascii_lowercase(), value.trim().to_string()))
}

pub fn run(options: ServeOptions) -> Result<()> {
    let mut settings = Settings::default();
    let mut variables: Vec<(String, String)> = Vec::new();
    let mut assignments: Vec<(String, String)> = Vec::new();
    if let Some(path) = &options.config {
        let file = tarn_common::config::read_config_file(path)?;
        assignments.extend(file.settings);
        assignments.extend(file.variables);
    }
    for text in &options.assignments {
        assignments.push(split_assignment(text)?);
    }
    if let Some(dir) = &options.data_dir {
        assignments.push(("data_dir".into(), dir.display().to_string()));
    }
    if let Some(bind) = &options.bind {
        assignments.push(("bind_address".into(), bind.clone()));
    }
    if let Some(port) = options.port {
        assignments.push(("port".into(), port.to_string()));
    }
    for (name, value) in assignments {
        if is_engine_setting(&name) {
            settings.set(&name, &value)?;
        } else {
            variables.push((name, value));
        }
    }
    settings.validate()?;
    let engine = tarn_sql::Engine::open(&settings)?;
    for (name, value) in &variables {
        engine.set_global(name, value)?;
    }
    let bind = engine
        .global_text("bind_address")
        .unwrap_or_else(|| "127.0.0.1".to_string());
    let port = engine.global_u64("port").unwrap_or(3306) as u16;
    let cert = engine.global_text("ssl_cert").filter(|s| !s.is_empty());
    let key = engine.global_text("ssl_key").filter(|s| !s.is_empty());
    let generate = engine
        .global_text("auto_generate_certs")
        .is_none_or(|v| matches!(v.as_str(), "1" | "ON" | "on"));
    let source = match (cert, key) {
        (Some(cert), Some(key)) => CertificateSource::Files {
            cert: cert.into(),
            key: key.into(),
        },
        _ if generate => CertificateSource::Generated {
            dir: settings.data_dir.clone(),
        },
        _ => CertificateSource::None,
    };
    let tls = server_config(&source)?;
    let tls_on = tls.is_some();
    if tls_on {
        engine.set_global("have_ssl", "YES")?;
    }
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .max_blocking_threads(tarn_server::limits::STATEMENT_THREADS_MAX)
        .thread_name("tarn-net")
        .enable_all()
        .build()
        .map_err(|e| Error::OutOfResources(format!("starting the network runtime: {e}")))?;
    let shared = Shared::new(engine.clone(), tls, cores);
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
        serve(shared.clone(), listener, shutdown_signal(), Duration::from_secs(30)).await;
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

async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
