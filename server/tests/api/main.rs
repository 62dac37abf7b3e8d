//! HTTP tests: the real router on a real socket, against the real PostgreSQL.

mod contact;
mod health;
mod helpers;
