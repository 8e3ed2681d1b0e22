//! (temporary stub)
use std::collections::BTreeMap;
use tarn_common::{Error, Result};
use tarn_row::Value;
#[derive(Clone, Default)]
pub struct SystemVariables { values: BTreeMap<String, Value> }
impl SystemVariables {
    pub fn new_global(_s: &tarn_common::settings::Settings) -> SystemVariables {
        let mut values = BTreeMap::new();
        values.insert("autocommit".to_string(), Value::Int(1));
        values.insert("transaction_isolation".to_string(), Value::Bytes(b"REPEATABLE-READ".to_vec()));
        values.insert("version_comment".to_string(), Value::Bytes(b"Tarn".to_vec()));
        SystemVariables { values }
    }
    pub fn session_from(g: &SystemVariables) -> SystemVariables { g.clone() }
    pub fn get(&self, name: &str) -> Option<Value> { self.values.get(&name.to_ascii_lowercase()).cloned() }
    pub fn set(&mut self, name: &str, value: Option<&Value>, _global: bool, defaults: &SystemVariables) -> Result<Value> {
        let v = match value { Some(v) => v.clone(), None => defaults.get(name).ok_or_else(|| Error::sql(1193, "HY000", format!("Unknown system variable '{name}'")))? };
        self.values.insert(name.to_ascii_lowercase(), v.clone());
        Ok(v)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> { self.values.iter().map(|(k, v)| (k.as_str(), v)) }
}
