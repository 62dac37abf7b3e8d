//! HTTP tests: the real router on a real socket, against the real PostgreSQL.

mod auth;
mod contact;
mod gate;
mod health;
mod helpers;
mod inbox;
mod lifecycle;
mod shares;
mod startup;
