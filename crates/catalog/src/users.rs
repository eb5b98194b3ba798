//! User accounts (`mysql_native_password` hashes, host matching, workload group privileges
//! and properties) and the stored form of workload groups and policies.

use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserMeta {
    pub user: String,
    pub host: String,
    /// SHA1(SHA1(password)), empty for an account without a password.
    pub password_hash: Vec<u8>,
    /// Workload groups the user was granted USAGE_PRIV on (`%`: all); every user may use
    /// `normal`.
    #[serde(default)]
    pub workload_groups: std::collections::BTreeSet<String>,
    /// Properties set with SET PROPERTY (`default_workload_group`).
    #[serde(default)]
    pub properties: std::collections::BTreeMap<String, String>,
    /// Privileges granted to the account itself.
    #[serde(default)]
    pub grants: crate::privileges::Grants,
    /// Roles granted to the account.
    #[serde(default)]
    pub roles: std::collections::BTreeSet<String>,
}

impl UserMeta {
    /// A new account without privileges.
    pub fn new(user: &str, host: &str, password: &str) -> UserMeta {
        UserMeta {
            user: user.to_string(),
            host: host.to_string(),
            password_hash: native_password_hash(password),
            workload_groups: Default::default(),
            properties: Default::default(),
            grants: Default::default(),
            roles: Default::default(),
        }
    }

    pub fn key(user: &str, host: &str) -> String {
        format!("{user}@{host}")
    }

    /// True if this account applies to a client connecting from `client_host`.
    pub fn matches_host(&self, client_host: &str) -> bool {
        self.host == "%"
            || self.host == client_host
            || (self.host == "localhost" && (client_host == "127.0.0.1" || client_host == "::1"))
    }
}

/// The stored form of a password (MySQL's `mysql_native_password`): SHA1(SHA1(password)).
pub fn native_password_hash(password: &str) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha1::digest(password.as_bytes());
    Sha1::digest(stage1).to_vec()
}

/// A workload policy as stored: its conditions `(metric, op, value)` and actions
/// `(name, argument)` as written, and normalized properties (the `workload` crate checks them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadPolicyMeta {
    pub id: u64,
    pub name: String,
    pub conditions: Vec<(String, String, String)>,
    pub actions: Vec<(String, Option<String>)>,
    pub properties: std::collections::BTreeMap<String, String>,
}

/// A workload group as stored: its id, name and normalized properties (the `workload` crate
/// gives them meaning).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadGroupMeta {
    pub id: u64,
    pub name: String,
    pub properties: std::collections::BTreeMap<String, String>,
}
