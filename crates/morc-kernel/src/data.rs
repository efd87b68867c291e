//! Assembly Data: a typed key-value store for acyclic exchange between a
//! program and its assemblies. Components read it when initialised and
//! write their results into it when terminated.

use std::collections::BTreeMap;

use super::value::Value;

/// Assembly Data: typed values by key, ordered by key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AssemblyData {
    entries: BTreeMap<String, Value>,
}

impl AssemblyData {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.get(key)
    }
    /// Stores `value` under `key`, replacing any previous one.
    pub fn set(&mut self, key: &str, value: Value) {
        self.entries.insert(key.to_string(), value);
    }
    /// Removes and returns the value under `key`.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.entries.remove(key)
    }
    /// Every entry, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.entries.iter()
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// Copies every entry of `other` into this store.
    pub fn merge(&mut self, other: &AssemblyData) {
        for (k, v) in &other.entries {
            self.entries.insert(k.clone(), v.clone());
        }
    }
}
