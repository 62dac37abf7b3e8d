//! The signed restore statement (`audit-digests/restore-<first>.json`) that `ebb doctor
//! --after-restore` writes ([`super::restore`]) and every verifier reads ([`super::verify`]).

use std::collections::BTreeMap;

use kernel::storage::restore_statement_key;
use serde::{Deserialize, Serialize};

use super::keys;

/// The restore statement's format name.
pub const FORMAT: &str = "ebb-audit-restore-v1";

/// What a restore statement says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    pub format: String,
    pub created_at: String,
    pub key_id: String,
    /// The superseded digests: `first..=last`.
    pub first: i64,
    pub last: i64,
    /// SHA-256 (hex) of digest `first - 1`'s object: the restored database's last digest.
    pub previous: Option<String>,
    /// The restored database's chains: each month's length and head when it was restored.
    pub chains: Vec<RestoredChain>,
    pub reason: String,
}

/// One month's chain as the restored database held it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoredChain {
    pub month: String,
    pub count: i64,
    pub head: String,
}

impl Statement {
    /// The restored length of `month`'s chain (0 when the restored database had none).
    pub fn restored(&self, month: &str) -> i64 {
        self.chains.iter().find(|c| c.month == month).map_or(0, |c| c.count)
    }
}

/// Reads a restore statement: signed by one of `keys`, in this format, stored under its name.
pub fn check_statement(key: &str, bytes: &[u8], keys: &[keys::PublicKey]) -> Result<Statement, String> {
    let env = super::digest::open(bytes, keys)?;
    let st: Statement = serde_json::from_str(&env.body).map_err(|e| format!("its body is not a restore statement ({e})"))?;
    if st.format != FORMAT || st.key_id != env.key_id {
        return Err(format!("unknown format {} or key mismatch", st.format));
    }
    if st.first < 1 || st.last < st.first || key != restore_statement_key(st.first) {
        return Err(format!("it names digests {} to {}, which its name {key} does not", st.first, st.last));
    }
    Ok(st)
}

/// The restored lengths by month, for a verifier: digest number → (month → restored count).
pub fn superseded_by(statements: &[Statement]) -> BTreeMap<i64, &Statement> {
    statements.iter().flat_map(|st| (st.first..=st.last).map(move |n| (n, st))).collect()
}
