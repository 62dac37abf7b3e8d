//! Database behaviour of the lifecycle jobs, against the real PostgreSQL. Time is injected.

mod claim;
mod prune;
