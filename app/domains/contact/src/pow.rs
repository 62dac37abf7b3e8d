//! The proof-of-work solver in the browser: fetches a challenge and searches for its number in
//! slices of a few milliseconds, giving the page back between slices, so typing never waits.
//! The answer is ALTCHA's payload (base64 of the JSON the server verifies).

use std::fmt::Write;

use sha2::{Digest, Sha256};

use crate::PowChallenge;

/// Longest run of hashing before the page gets the main thread back, in milliseconds.
const SLICE_MS: f64 = 8.0;

/// A solved challenge: the payload for the form, and when it stops counting (ms since 1970).
#[derive(Debug, Clone, PartialEq)]
pub struct Solved {
    pub payload: String,
    pub expires_ms: f64,
}

/// Fetches a challenge and solves it; `None` when there was none to solve (the form is then
/// sent without a proof, which only puts it in quarantine: nothing a visitor typed is lost).
pub async fn fetch_and_solve() -> Option<Solved> {
    let challenge = crate::api::contact_challenge().await.ok()?;
    solve(&challenge).await
}

/// Gives the main thread back (a macrotask, so input events run first).
async fn yield_to_page() {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

async fn solve(c: &PowChallenge) -> Option<Solved> {
    if c.algorithm != "SHA-256" {
        return None;
    }
    let target = hex::decode(&c.challenge).ok()?;
    let started = js_sys::Date::now();
    let mut slice = started;
    // The salt's hash state once; each candidate only adds its digits.
    let prefix = Sha256::new_with_prefix(c.salt.as_bytes());
    let mut digits = String::with_capacity(20);
    for n in 0..=c.maxnumber {
        digits.clear();
        let _ = write!(digits, "{n}");
        if prefix.clone().chain_update(digits.as_bytes()).finalize().as_slice() == target.as_slice() {
            let took = (js_sys::Date::now() - started) as u64;
            return Some(Solved { payload: payload(c, n, took)?, expires_ms: expires_ms(&c.salt) });
        }
        if n % 512 == 511 && js_sys::Date::now() - slice > SLICE_MS {
            yield_to_page().await;
            slice = js_sys::Date::now();
        }
    }
    None
}

fn payload(c: &PowChallenge, number: u64, took: u64) -> Option<String> {
    let json = serde_json::json!({
        "algorithm": c.algorithm, "challenge": c.challenge, "number": number, "salt": c.salt, "signature": c.signature, "took": took,
    });
    web_sys::window()?.btoa(&json.to_string()).ok()
}

/// The challenge's expiry (the salt's `expires`, in seconds) in milliseconds; far away when absent.
fn expires_ms(salt: &str) -> f64 {
    salt.split_once('?')
        .and_then(|(_, q)| q.split('&').filter_map(|p| p.split_once('=')).find(|(k, _)| *k == "expires"))
        .and_then(|(_, v)| v.parse::<f64>().ok())
        .map_or(f64::MAX, |s| s * 1000.0)
}
