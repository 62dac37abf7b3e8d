//! Who is signed in, as both sides see it (the session gate's answer), and what each role may do.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::i18n::{t, texts};

/// What an admin may do. Ordered: each role may do everything the roles before it may.
///
/// - `Auditor` reads the audit trail (the log, verification, the archive, exports of the log,
///   checkpoints), the retention report, the jobs and the alerts — nothing personal beyond what
///   the audit log shows — and manages their own passkeys and sessions.
/// - `Admin` also works with people's data: the inbox and its quarantine, shares and file
///   requests, data requests and legal holds; runs jobs and resolves alerts.
/// - `Owner` also manages the admins (invites, roles, removal) and the settings (retention
///   periods).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Auditor,
    Admin,
    Owner,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Owner, Role::Admin, Role::Auditor];

    /// The stored name (the `admins.role` column, the CLI's argument).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Auditor => "auditor",
            Role::Admin => "admin",
            Role::Owner => "owner",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// The role's name for people, in the page's language.
    pub fn label(self) -> &'static str {
        t(match self {
            Role::Auditor => RoleT::Auditor,
            Role::Admin => RoleT::Admin,
            Role::Owner => RoleT::Owner,
        })
    }
}

texts! {
    pub enum RoleT {
    Owner { en: "Owner", ja: "オーナー" }
    Admin { en: "Admin", ja: "管理者" }
    Auditor { en: "Auditor", ja: "監査担当" }
}
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

// Stored as its name (`admins.role`, `admin_invites.role`; a check constraint lists the names).
#[cfg(feature = "ssr")]
impl sqlx::Type<sqlx::Postgres> for Role {
    fn type_info() -> sqlx::postgres::PgTypeInfo {
        <&str as sqlx::Type<sqlx::Postgres>>::type_info()
    }
    fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
        <&str as sqlx::Type<sqlx::Postgres>>::compatible(ty)
    }
}

#[cfg(feature = "ssr")]
impl<'r> sqlx::Decode<'r, sqlx::Postgres> for Role {
    fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        let name = <&str as sqlx::Decode<sqlx::Postgres>>::decode(value)?;
        Role::parse(name).ok_or_else(|| format!("unknown role {name:?}").into())
    }
}

#[cfg(feature = "ssr")]
impl sqlx::Encode<'_, sqlx::Postgres> for Role {
    fn encode_by_ref(&self, buf: &mut sqlx::postgres::PgArgumentBuffer) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        <&str as sqlx::Encode<sqlx::Postgres>>::encode_by_ref(&self.as_str(), buf)
    }
}

/// The admin pages and the least role that opens each (the longest prefix of the path decides):
/// the navigation shows a role only its pages, and the server's gate refuses the others.
pub const PAGES: &[(&str, Role)] = &[
    ("/admin", Role::Auditor),
    ("/admin/inbox", Role::Admin),
    ("/admin/shares", Role::Admin),
    ("/admin/audit", Role::Auditor),
    ("/admin/retention", Role::Auditor),
    ("/admin/requests", Role::Admin),
    ("/admin/settings", Role::Admin),
    ("/admin/account", Role::Auditor),
    // Not a page: the live updates every admin page listens to (its route says the same).
    ("/admin/live", Role::Auditor),
];

/// The least role that opens the admin page `path` (an unlisted page: the owner's). `/admin` is
/// the dashboard alone; every other entry covers the pages below it.
pub fn page_role(path: &str) -> Role {
    let covers = |prefix: &str| path == prefix || (prefix != "/admin" && path.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('/')));
    PAGES.iter().filter(|(prefix, _)| covers(prefix)).max_by_key(|(prefix, _)| prefix.len()).map_or(Role::Owner, |(_, role)| *role)
}

/// The signed-in admin, as the browser sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminInfo {
    pub id: Uuid,
    pub name: String,
    pub role: Role,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_ordered_and_round_trip() {
        assert!(Role::Auditor < Role::Admin && Role::Admin < Role::Owner);
        for r in Role::ALL {
            assert_eq!(Role::parse(r.as_str()), Some(r));
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{}\"", r.as_str()));
        }
        assert_eq!(Role::parse("root"), None);
    }

    #[test]
    fn a_page_needs_the_role_of_its_longest_listed_prefix() {
        assert_eq!(page_role("/admin"), Role::Auditor);
        assert_eq!(page_role("/admin/inbox"), Role::Admin);
        assert_eq!(page_role("/admin/requests/12"), Role::Admin);
        assert_eq!(page_role("/admin/audit/archive"), Role::Auditor);
        // A prefix is a whole segment: /admin/inboxes is not the inbox.
        assert_eq!(page_role("/admin/inboxes"), Role::Owner);
        assert_eq!(page_role("/admin/admins"), Role::Owner);
    }
}
