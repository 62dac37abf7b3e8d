//! The record of what admins (and the system) did. The partitioned audit log and its archive
//! plug in here later; every admin change already goes through [`db::record_admin_action`].

#[cfg(feature = "ssr")]
pub mod db;
