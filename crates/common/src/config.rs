//! Where settings come from at start: the TOML file and the command line.
//!
//! # Precedence
//!
//! A value is taken from the first of these that sets it, highest first:
//!
//! 1. `SET GLOBAL name = value` while the server runs. It lasts until the server
//!    stops: it is **not** written back to the file. Only the settings that can
//!    change while running accept it ([`SettingSpec::live`]); the others fail with
//!    error 1238 ("is a read only variable") and need a restart.
//! 2. The command line: `--set name=value` (and the server's own flags such as
//!    `--port`), applied in order, so a later flag wins over an earlier one.
//! 3. The TOML file named by `--config` ([`read_config_file`]).
//! 4. The defaults ([`Settings::default`] and the SQL layer's variable table).
//!
//! [`StartupSettings::resolve`] applies 4, 3 and 2 in that order; the SQL layer's
//! `Engine::set_global` applies the variables it returns, and `SET GLOBAL` does 1.
//!
//! # The file
//!
//! Keys are flat: an engine setting of [`SETTINGS`] (or its MySQL alias,
//! [`setting_name`]), or anything else, which is handed to the SQL layer as a MySQL
//! global variable (`max_connections`, `wait_timeout`, `port`, `bind_address`,
//! `ssl_cert`, ...). Keys may be grouped under `[engine]` and `[server]` tables (the
//! group is only for reading; a key means the same in either). Dashes in keys read as
//! underscores, as in MySQL's option files. Values are strings, integers or
//! booleans (booleans become `on`/`off`).
//!
//! ```toml
//! buffer_pool_size = "1G"
//! io_method = "direct"
//! lock_scheduling = "cats"
//!
//! [server]
//! port = 3306
//! bind_address = "127.0.0.1"
//! max_connections = 1000
//! ```
//!
//! An engine setting's value is checked here ([`Settings::set`]): a bad one is an
//! [`Error::InvalidSetting`] naming the setting, the value, the file and the line.
//! Unknown keys are not an error here: they are variables, and the SQL layer rejects
//! an unknown variable (1193) when it applies them.

use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::error::{Error, Result};
use crate::settings::{SETTINGS, SettingSpec, Settings, setting_name};

/// The tables a file may group its keys in.
pub const CONFIG_GROUPS: &[&str] = &["engine", "server"];

/// A configuration file's contents, validated as far as this layer can.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigFile {
    /// Engine settings by their canonical name ([`SETTINGS`]), in file order.
    pub settings: Vec<(String, String)>,
    /// Everything else, for the SQL layer's global variables, in file order.
    pub variables: Vec<(String, String)>,
}

/// Reads and checks the TOML file at `path`.
pub fn read_config_file(path: &Path) -> Result<ConfigFile> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
    parse_config(path, &text)
}

/// Parses `text`, the contents of the file `path` (named in errors).
pub fn parse_config(path: &Path, text: &str) -> Result<ConfigFile> {
    let located = |span: Option<Range<usize>>, message: String| {
        let at = span.map_or(String::new(), |s| {
            format!(" line {}", line_of(text, s.start))
        });
        Error::Config {
            path: path.to_path_buf(),
            message: format!("{at}: {message}"),
        }
    };
    let root = DeTable::parse(text).map_err(|e| located(e.span(), e.message().to_string()))?;
    let mut entries: Vec<(String, Range<usize>, &Spanned<DeValue<'_>>)> = Vec::new();
    for (key, value) in root.get_ref() {
        let name = normalise(key.get_ref());
        match value.get_ref() {
            DeValue::Table(group) if CONFIG_GROUPS.contains(&name.as_str()) => {
                for (key, value) in group {
                    entries.push((normalise(key.get_ref()), key.span(), value));
                }
            }
            DeValue::Table(_) => {
                return Err(located(
                    Some(key.span()),
                    format!(
                        "unknown table [{name}]: keys are flat, or grouped under {}",
                        CONFIG_GROUPS
                            .iter()
                            .map(|g| format!("[{g}]"))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                ));
            }
            _ => entries.push((name, key.span(), value)),
        }
    }
    entries.sort_by_key(|e| e.1.start);
    let mut config = ConfigFile::default();
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut check = Settings::default();
    for (key, span, value) in entries {
        let line = line_of(text, span.start);
        let value = value_text(value.get_ref()).ok_or_else(|| {
            located(
                Some(span.clone()),
                format!(
                    "'{key}' is a {}; expected a string, an integer or a boolean",
                    value.get_ref().type_str()
                ),
            )
        })?;
        let canonical = setting_name(&key).map_or(key.clone(), str::to_string);
        if let Some((_, first)) = seen.iter().find(|(k, _)| *k == canonical) {
            return Err(located(
                Some(span),
                format!("'{key}' is set twice (first on line {first})"),
            ));
        }
        seen.push((canonical.clone(), line));
        if setting_name(&key).is_some() {
            check.set(&canonical, &value).map_err(|e| match e {
                Error::InvalidSetting {
                    name,
                    value,
                    reason,
                } => Error::InvalidSetting {
                    name,
                    value,
                    reason: format!("{reason} ({} line {line})", path.display()),
                },
                other => other,
            })?;
            config.settings.push((canonical, value));
        } else {
            config.variables.push((key, value));
        }
    }
    Ok(config)
}

/// A key as settings and variables spell it: lower-case, `-` read as `_`.
fn normalise(key: &str) -> String {
    key.trim().to_ascii_lowercase().replace('-', "_")
}

fn value_text(value: &DeValue<'_>) -> Option<String> {
    match value {
        DeValue::String(s) => Some(s.to_string()),
        DeValue::Integer(i) => {
            let digits = i.as_str().replace('_', "");
            match i.radix() {
                10 => Some(digits),
                radix => u64::from_str_radix(&digits, radix)
                    .ok()
                    .map(|v| v.to_string()),
            }
        }
        DeValue::Boolean(b) => Some(if *b { "on" } else { "off" }.to_string()),
        _ => None,
    }
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The settings and variables an engine starts with, after the file and the flags.
#[derive(Clone, Debug)]
pub struct StartupSettings {
    /// The engine settings to open the storage with (validated, [`Settings::validate`]
    /// not yet called).
    pub settings: Settings,
    /// MySQL global variables to apply once the engine is open (`Engine::set_global`),
    /// in order: the file's, then the flags'.
    pub variables: Vec<(String, String)>,
    /// The configuration file read, if any.
    pub config_path: Option<PathBuf>,
}

impl StartupSettings {
    /// Defaults, then the file at `config` (if any), then `assignments` (each
    /// `name=value`, from `--set` and the server's flags) in order. An assignment
    /// naming an engine setting is checked now; any other goes to `variables`.
    pub fn resolve<'a>(
        config: Option<&Path>,
        assignments: impl IntoIterator<Item = &'a str>,
    ) -> Result<StartupSettings> {
        let mut settings = Settings::default();
        let mut variables = Vec::new();
        if let Some(path) = config {
            let file = read_config_file(path)?;
            for (name, value) in &file.settings {
                settings.set(name, value)?;
            }
            variables = file.variables;
        }
        for assignment in assignments {
            let (name, value) = crate::settings::split_assignment(assignment)?;
            let name = normalise(name);
            match setting_name(&name) {
                Some(setting) => settings.set(setting, value)?,
                None => variables.push((name, value.trim().to_string())),
            }
        }
        Ok(StartupSettings {
            settings,
            variables,
            config_path: config.map(Path::to_path_buf),
        })
    }
}

/// The settings `SET GLOBAL` may change while the engine runs.
pub fn live_settings() -> impl Iterator<Item = &'static SettingSpec> {
    SETTINGS.iter().filter(|s| s.live)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ConfigFile> {
        parse_config(Path::new("/etc/tarn.toml"), text)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_good_file_splits_settings_from_variables_in_file_order() {
        let config = parse(
            r#"
# engine
buffer_pool_size = "1G"
io_method = "direct"
latch_accounting = false
innodb_flush_log_at_trx_commit = 2

[server]
max_connections = 1000
wait_timeout = 600
bind-address = "127.0.0.1"
ssl_cert = "/etc/tarn/cert.pem"

[engine]
lock_scheduling = "cats"
scan_threads = 0x10
"#,
        )
        .unwrap();
        assert_eq!(
            config.settings,
            pairs(&[
                ("buffer_pool_size", "1G"),
                ("io_method", "direct"),
                ("latch_accounting", "off"),
                ("flush_log_at_commit", "2"),
                ("lock_scheduling", "cats"),
                ("scan_threads", "16"),
            ])
        );
        assert_eq!(
            config.variables,
            pairs(&[
                ("max_connections", "1000"),
                ("wait_timeout", "600"),
                ("bind_address", "127.0.0.1"),
                ("ssl_cert", "/etc/tarn/cert.pem"),
            ])
        );
    }

    #[test]
    fn a_bad_setting_value_names_the_setting_the_file_and_the_line() {
        let err = parse("port = 3306\n\nio_method = \"mmap\"\n").unwrap_err();
        assert!(matches!(err, Error::InvalidSetting { .. }), "{err}");
        let msg = err.to_string();
        for part in ["io_method", "mmap", "/etc/tarn.toml", "line 3"] {
            assert!(msg.contains(part), "{msg} lacks {part}");
        }
    }

    #[test]
    fn unknown_keys_go_to_the_variables() {
        let config = parse("no_such_thing = 1\n").unwrap();
        assert!(config.settings.is_empty());
        assert_eq!(config.variables, pairs(&[("no_such_thing", "1")]));
    }

    #[test]
    fn wrong_types_and_syntax_errors_name_the_file_line_and_key() {
        for (text, parts) in [
            (
                "\nscan_threads = 1.5\n",
                &["line 2", "scan_threads", "float"][..],
            ),
            ("port = [1, 2]\n", &["line 1", "port", "array"]),
            ("[mysqld]\nport = 1\n", &["line 1", "mysqld"]),
            ("a = 1\nb = = 2\n", &["line 2"]),
            (
                "port = 1\n[server]\nport = 2\n",
                &["line 3", "port", "twice"],
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert!(matches!(err, Error::Config { .. }), "{text}: {err}");
            let msg = err.to_string();
            assert!(msg.contains("/etc/tarn.toml"), "{msg}");
            for part in parts {
                assert!(msg.contains(part), "{text}: {msg} lacks {part}");
            }
        }
    }

    #[test]
    fn flags_override_the_file_and_unknown_flags_are_variables() {
        let dir = std::env::temp_dir().join(format!("tarn-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tarn.toml");
        std::fs::write(
            &path,
            "scan_threads = 2\nlock_scheduling = \"fifo\"\nport = 3307\n",
        )
        .unwrap();
        let startup = StartupSettings::resolve(
            Some(&path),
            ["scan_threads=4", "port=3308", "max-connections=5"],
        )
        .unwrap();
        assert_eq!(startup.settings.scan_threads, 4);
        assert_eq!(
            startup.settings.lock_scheduling,
            crate::settings::LockScheduling::Fifo
        );
        assert_eq!(
            startup.variables,
            pairs(&[("port", "3307"), ("port", "3308"), ("max_connections", "5")])
        );
        assert!(StartupSettings::resolve(None, ["scan_threads=lots"]).is_err());
        assert!(matches!(
            StartupSettings::resolve(Some(&dir.join("missing.toml")), []),
            Err(Error::Io { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
