//! HTTP tests: the real router on a real socket, against the real PostgreSQL.

#[path = "../common/backend.rs"]
#[macro_use]
mod backend;

mod alarms;
mod archive;
mod assets;
mod audit;
mod auth;
mod contact;
mod crash;
mod doctor;
mod edge;
mod exports;
mod file_requests;
mod formats;
mod gate;
mod health;
mod helpers;
mod hostile;
mod inbox;
mod instances;
mod lifecycle;
mod live;
mod notify;
mod page_cache;
mod prefs;
mod requests;
mod retention;
mod shares;
mod side_door;
mod spam;
mod startup;
mod storage;
mod tlog;
mod trail;
mod upgrade;
