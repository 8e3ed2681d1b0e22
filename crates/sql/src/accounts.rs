//! Accounts (placeholder until the accounts work lands): only `root` with an empty
//! password, as a superuser.

use std::sync::Arc;

use crate::engine::Engine;
use crate::session::Session;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthPlugin {
    NativePassword,
    CachingSha2Password,
}

impl AuthPlugin {
    pub fn name(self) -> &'static str {
        match self {
            AuthPlugin::NativePassword => "mysql_native_password",
            AuthPlugin::CachingSha2Password => "caching_sha2_password",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Account {
    pub user: String,
    pub host: String,
    pub plugin: AuthPlugin,
    pub stored_hash: Option<Vec<u8>>,
}

impl Engine {
    pub fn find_account(&self, user: &str, _client_host: &str) -> Option<Account> {
        (user == "root").then(|| Account {
            user: "root".into(),
            host: "localhost".into(),
            plugin: AuthPlugin::NativePassword,
            stored_hash: None,
        })
    }

    pub fn session_for(self: &Arc<Self>, account: &Account, client_host: &str, id: u64) -> Session {
        let _ = &account.host;
        self.session_with_id(&account.user, client_host, id)
    }
}
