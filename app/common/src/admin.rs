//! Who is signed in, as both sides see it (the session gate's answer).

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The signed-in admin, as the browser sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminInfo {
    pub id: Uuid,
    pub name: String,
}
