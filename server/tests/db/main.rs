//! Database behaviour of the lifecycle jobs, against the real PostgreSQL. Time is injected.

mod auth;
mod claim;
mod inbox;
mod prune;
mod shares;
