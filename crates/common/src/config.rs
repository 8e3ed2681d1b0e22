//! The TOML settings file (placeholder until the settings work lands).

use std::path::Path;

use crate::error::{Error, Result};

pub struct ConfigFile {
    pub settings: Vec<(String, String)>,
    pub variables: Vec<(String, String)>,
}

pub fn read_config_file(path: &Path) -> Result<ConfigFile> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::InvalidSetting {
        name: "config".into(),
        value: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| Error::InvalidSetting {
        name: "config".into(),
        value: path.display().to_string(),
        reason: e.to_string(),
    })?;
    let mut out = ConfigFile { settings: Vec::new(), variables: Vec::new() };
    for (key, value) in table {
        let value = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(n) => n.to_string(),
            toml::Value::Boolean(b) => if b { "ON".into() } else { "OFF".into() },
            toml::Value::Float(x) => x.to_string(),
            _ => {
                return Err(Error::InvalidSetting {
                    name: key,
                    value: path.display().to_string(),
                    reason: "expected a string, number or boolean".into(),
                });
            }
        };
        if crate::settings::SETTINGS.iter().any(|s| s.name == key) {
            out.settings.push((key, value));
        } else {
            out.variables.push((key, value));
        }
    }
    Ok(out)
}
