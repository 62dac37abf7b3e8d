//! The server's kernel: what every domain needs and no domain owns — the application state, the
//! lifecycle engine and its claims, the one alert helper, the audit writer, secrets and keyed
//! hashes, the session gate, storage, CSV streaming and rate limits. Server only; it depends on
//! `common` and on no domain (cargo enforces it: no domain is among its dependencies). Where the
//! kernel must act on a domain's data it declares a trait the domain implements (jobs' steps,
//! [`session::SessionAdmins`]).

pub mod alerts;
pub mod audit;
pub mod csv_export;
pub mod file_events;
pub mod holds;
pub mod http;
pub mod jobs;
pub mod keyring;
pub mod live;
pub mod load;
pub mod metrics;
pub mod personal;
pub mod prune;
pub mod qr;
pub mod ratelimit;
pub mod request;
pub mod retention;
pub mod session;
pub mod settings;
pub mod state;
pub mod storage;
pub mod token;
