//! The connection phase: the server's greeting and the client's answers.

use super::{Malformed, Reader, caps, charset};

/// The server's Protocol::HandshakeV10.
pub fn greeting(
    server_version: &str,
    connection_id: u32,
    nonce: &[u8; 20],
    capabilities: u32,
    status_flags: u16,
    auth_plugin: &str,
) -> Vec<u8> {
    let mut p = Vec::with_capacity(96);
    p.push(10);
    p.extend_from_slice(server_version.as_bytes());
    p.push(0);
    p.extend_from_slice(&connection_id.to_le_bytes());
    p.extend_from_slice(&nonce[..8]);
    p.push(0);
    p.extend_from_slice(&(capabilities as u16).to_le_bytes());
    p.push(charset::UTF8MB4_0900_AI_CI);
    p.extend_from_slice(&status_flags.to_le_bytes());
    p.extend_from_slice(&((capabilities >> 16) as u16).to_le_bytes());
    p.push(21);
    p.extend_from_slice(&[0; 10]);
    p.extend_from_slice(&nonce[8..]);
    p.push(0);
    p.extend_from_slice(auth_plugin.as_bytes());
    p.push(0);
    p
}

/// What the client answered with (HandshakeResponse41, or an SSLRequest when
/// `ssl_request`).
#[derive(Debug, Clone, Default)]
pub struct HandshakeResponse {
    pub capabilities: u32,
    pub max_packet_bytes: u32,
    pub collation: u8,
    pub ssl_request: bool,
    pub user: String,
    pub auth_response: Vec<u8>,
    pub database: Option<String>,
    pub auth_plugin: Option<String>,
    pub attributes: Vec<(String, String)>,
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Parses a HandshakeResponse41 or an SSLRequest (32 bytes, CLIENT_SSL set).
pub fn parse_response(payload: &[u8]) -> Result<HandshakeResponse, Malformed> {
    let mut r = Reader::new(payload);
    let capabilities = r.u32()?;
    if capabilities & caps::PROTOCOL_41 == 0 {
        return Err(Malformed("the client does not speak protocol 4.1"));
    }
    let max_packet_bytes = r.u32()?;
    let collation = r.u8()?;
    r.bytes(23, "reserved bytes")?;
    let mut response = HandshakeResponse {
        capabilities,
        max_packet_bytes,
        collation,
        ..Default::default()
    };
    if r.is_empty() {
        if capabilities & caps::SSL == 0 {
            return Err(Malformed("a handshake response without a user name"));
        }
        response.ssl_request = true;
        return Ok(response);
    }
    response.user = text(r.null_terminated());
    response.auth_response = if capabilities & caps::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        r.lenenc_bytes()?.to_vec()
    } else if capabilities & caps::SECURE_CONNECTION != 0 {
        let n = r.u8()? as usize;
        r.bytes(n, "auth response")?.to_vec()
    } else {
        r.null_terminated().to_vec()
    };
    if capabilities & caps::CONNECT_WITH_DB != 0 && !r.is_empty() {
        let db = r.null_terminated();
        if !db.is_empty() {
            response.database = Some(text(db));
        }
    }
    if capabilities & caps::PLUGIN_AUTH != 0 && !r.is_empty() {
        response.auth_plugin = Some(text(r.null_terminated()));
    }
    if capabilities & caps::CONNECT_ATTRS != 0 && !r.is_empty() {
        response.attributes = parse_attributes(&mut r)?;
    }
    Ok(response)
}

fn parse_attributes(r: &mut Reader<'_>) -> Result<Vec<(String, String)>, Malformed> {
    let all = r.lenenc_bytes()?;
    let mut r = Reader::new(all);
    let mut out = Vec::new();
    while !r.is_empty() {
        let key = text(r.lenenc_bytes()?);
        let value = text(r.lenenc_bytes()?);
        out.push((key, value));
    }
    Ok(out)
}

/// COM_CHANGE_USER's fields (after the command byte).
pub fn parse_change_user(
    payload: &[u8],
    capabilities: u32,
) -> Result<HandshakeResponse, Malformed> {
    let mut r = Reader::new(payload);
    let mut response = HandshakeResponse {
        capabilities,
        user: text(r.null_terminated()),
        ..Default::default()
    };
    response.auth_response = if capabilities & caps::SECURE_CONNECTION != 0 {
        let n = r.u8()? as usize;
        r.bytes(n, "auth response")?.to_vec()
    } else {
        r.null_terminated().to_vec()
    };
    let db = r.null_terminated();
    if !db.is_empty() {
        response.database = Some(text(db));
    }
    if r.remaining() >= 2 {
        response.collation = r.u16()? as u8;
    }
    if capabilities & caps::PLUGIN_AUTH != 0 && !r.is_empty() {
        response.auth_plugin = Some(text(r.null_terminated()));
    }
    if capabilities & caps::CONNECT_ATTRS != 0 && !r.is_empty() {
        response.attributes = parse_attributes(&mut r)?;
    }
    Ok(response)
}

/// An AuthSwitchRequest: asks the client to answer `plugin`'s challenge.
pub fn auth_switch(plugin: &str, nonce: &[u8; 20]) -> Vec<u8> {
    let mut p = Vec::with_capacity(2 + plugin.len() + 21);
    p.push(0xfe);
    p.extend_from_slice(plugin.as_bytes());
    p.push(0);
    p.extend_from_slice(nonce);
    p.push(0);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response_bytes(user: &str, auth: &[u8], db: Option<&str>, plugin: &str) -> Vec<u8> {
        let capabilities = caps::PROTOCOL_41
            | caps::SECURE_CONNECTION
            | caps::PLUGIN_AUTH
            | caps::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | caps::CONNECT_ATTRS
            | if db.is_some() {
                caps::CONNECT_WITH_DB
            } else {
                0
            };
        let mut p = Vec::new();
        p.extend_from_slice(&capabilities.to_le_bytes());
        p.extend_from_slice(&(1u32 << 24).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        p.extend_from_slice(user.as_bytes());
        p.push(0);
        super::super::put_lenenc_bytes(&mut p, auth);
        if let Some(db) = db {
            p.extend_from_slice(db.as_bytes());
            p.push(0);
        }
        p.extend_from_slice(plugin.as_bytes());
        p.push(0);
        let mut attrs = Vec::new();
        super::super::put_lenenc_bytes(&mut attrs, b"_client_name");
        super::super::put_lenenc_bytes(&mut attrs, b"libmariadb");
        super::super::put_lenenc_bytes(&mut p, &attrs);
        p
    }

    #[test]
    fn a_full_response_parses_with_database_plugin_and_attributes() {
        let bytes = response_bytes("app", &[1, 2, 3], Some("shop"), "mysql_native_password");
        let r = parse_response(&bytes).unwrap();
        assert_eq!(r.user, "app");
        assert_eq!(r.auth_response, vec![1, 2, 3]);
        assert_eq!(r.database.as_deref(), Some("shop"));
        assert_eq!(r.auth_plugin.as_deref(), Some("mysql_native_password"));
        assert_eq!(
            r.attributes,
            vec![("_client_name".into(), "libmariadb".into())]
        );
        assert!(!r.ssl_request);
    }

    #[test]
    fn every_truncation_of_a_response_is_an_error_or_a_shorter_answer_never_a_panic() {
        let bytes = response_bytes("app", &[9; 20], Some("shop"), "caching_sha2_password");
        for len in 0..bytes.len() {
            let _ = parse_response(&bytes[..len]);
        }
        assert!(parse_response(&bytes[..10]).is_err());
    }

    #[test]
    fn the_greeting_carries_the_version_nonce_and_plugin() {
        let nonce = *b"abcdefghijklmnopqrst";
        let g = greeting(
            "8.0.36-tarn-0.1",
            7,
            &nonce,
            caps::SERVER,
            2,
            "mysql_native_password",
        );
        assert_eq!(g[0], 10);
        assert!(g.windows(15).any(|w| w == b"8.0.36-tarn-0.1"));
        assert!(
            g.windows(12)
                .any(|w| w == b"mnopqrst\0mys" || w == &nonce[8..20])
        );
        assert!(g.ends_with(b"mysql_native_password\0"));
    }
}
