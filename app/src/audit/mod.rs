//! The record of what admins (and the system) did. The partitioned audit log and its archive
//! plug in here later; every admin change already goes through [`db::record_admin_action`].

#[cfg(feature = "ssr")]
pub mod db;

/// What an admin did. The stored names are stable (log searches and, later, the archive read
/// them); one enum keeps them in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditAction {
    AdminCreate,
    AlertResolve,
    SignIn,
    InquiryDelete,
    InquiryExport,
    InviteCreate,
    MaintenanceRun,
    PasskeyAdd,
    PasskeyRemove,
    PasskeyRename,
    SessionRevoke,
    RetentionChange,
    ShareCreate,
    ShareRevoke,
}

impl AuditAction {
    /// The stored, stable name (`share.create`…).
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::AdminCreate => "admin.create",
            AuditAction::AlertResolve => "alert.resolve",
            AuditAction::SignIn => "auth.signin",
            AuditAction::InquiryDelete => "inquiry.delete",
            AuditAction::InquiryExport => "inquiry.export",
            AuditAction::InviteCreate => "invite.create",
            AuditAction::MaintenanceRun => "maintenance.run",
            AuditAction::PasskeyAdd => "passkey.add",
            AuditAction::PasskeyRemove => "passkey.remove",
            AuditAction::PasskeyRename => "passkey.rename",
            AuditAction::SessionRevoke => "session.revoke",
            AuditAction::RetentionChange => "settings.retention_days",
            AuditAction::ShareCreate => "share.create",
            AuditAction::ShareRevoke => "share.revoke",
        }
    }
}
