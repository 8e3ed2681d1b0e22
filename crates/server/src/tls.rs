//! TLS: the server's certificate and rustls configuration.
//!
//! The certificate comes from `ssl_cert` / `ssl_key` (PEM files). Without them and
//! with `auto_generate_certs` on (MySQL's default), a self-signed certificate for
//! `localhost` is generated into the data directory on first start
//! (`server-cert.pem`, `server-key.pem`, the key readable by its owner only) and
//! reused afterwards. With neither, TLS is off and the server does not advertise
//! CLIENT_SSL.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tarn_common::{Error, Result};

pub const GENERATED_CERT_FILE: &str = "server-cert.pem";
pub const GENERATED_KEY_FILE: &str = "server-key.pem";

fn tls_error(what: impl std::fmt::Display) -> Error {
    Error::sql(2026, "HY000", format!("TLS configuration: {what}"))
}

/// Where the certificate comes from.
pub enum CertificateSource {
    Files {
        cert: PathBuf,
        key: PathBuf,
    },
    /// Generate one into (or reuse from) this directory.
    Generated {
        dir: PathBuf,
    },
    None,
}

/// The rustls configuration for `source`, or None when TLS is off.
pub fn server_config(source: &CertificateSource) -> Result<Option<Arc<rustls::ServerConfig>>> {
    let (cert, key) = match source {
        CertificateSource::None => return Ok(None),
        CertificateSource::Files { cert, key } => (cert.clone(), key.clone()),
        CertificateSource::Generated { dir } => generate_if_missing(dir)?,
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
        .map_err(|e| tls_error(format_args!("reading {}: {e}", cert.display())))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| tls_error(format_args!("reading {}: {e}", cert.display())))?;
    if certs.is_empty() {
        return Err(tls_error(format_args!(
            "no certificate in {}",
            cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(&key)
        .map_err(|e| tls_error(format_args!("reading {}: {e}", key.display())))?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(tls_error)?
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .map_err(tls_error)?;
    Ok(Some(Arc::new(config)))
}

fn generate_if_missing(dir: &Path) -> Result<(PathBuf, PathBuf)> {
    let cert = dir.join(GENERATED_CERT_FILE);
    let key = dir.join(GENERATED_KEY_FILE);
    if cert.exists() && key.exists() {
        return Ok((cert, key));
    }
    let generated =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .map_err(tls_error)?;
    std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    write_private(&key, generated.signing_key.serialize_pem().as_bytes())
        .map_err(|e| io_error(&key, e))?;
    std::fs::write(&cert, generated.cert.pem()).map_err(|e| io_error(&cert, e))?;
    tracing::info!(
        "generated a self-signed TLS certificate: {}",
        cert.display()
    );
    Ok((cert, key))
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    tls_error(format_args!("writing {}: {e}", path.display()))
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_certificate_is_written_once_and_loads() {
        let dir = tempfile::tempdir().unwrap();
        let source = CertificateSource::Generated {
            dir: dir.path().to_path_buf(),
        };
        assert!(server_config(&source).unwrap().is_some());
        let first = std::fs::read(dir.path().join(GENERATED_CERT_FILE)).unwrap();
        assert!(server_config(&source).unwrap().is_some());
        assert_eq!(
            std::fs::read(dir.path().join(GENERATED_CERT_FILE)).unwrap(),
            first
        );
        assert!(server_config(&CertificateSource::None).unwrap().is_none());
        let missing = CertificateSource::Files {
            cert: dir.path().join("nope.pem"),
            key: dir.path().join("nope.key"),
        };
        let e = server_config(&missing).unwrap_err().to_string();
        assert!(e.contains("nope.pem"), "{e}");
    }
}
