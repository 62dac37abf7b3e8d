//! Database behaviour of the lifecycle jobs, against the real PostgreSQL. Time is injected.

#[path = "../common/backend.rs"]
#[macro_use]
mod backend;

mod audit;
mod auth;
mod claim;
mod contact;
mod holds;
mod inbox;
mod prune;
mod shares;
