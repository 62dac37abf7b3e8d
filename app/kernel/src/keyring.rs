//! The server's keyed hashes and MACs, one [`Purpose`] per use. The key is the secret in
//! `settings` (`audit_client_secret`, generated on first start, first writer wins); a
//! [`Keyring`] exists only loaded — [`Keyring::load`] reads it before the application state is
//! built (`server::build_state`), so no request, job or tool can hash with a stand-in key.
//!
//! Every purpose is a separate domain of the same HMAC-SHA256 (`purpose ‖ 0 ‖ data`), so a value
//! made for one use is never valid for another (a rate-limit bucket is not a receipt). The client
//! hash of the audit log keeps its original form (the address alone), so hashes recorded before
//! the keyring still match.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What a keyed value is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The audit log's client hash: the same client gives the same value, the address cannot be
    /// recovered.
    Client,
    /// A rate-limit bucket (the client's network).
    RateLimit,
    /// A plain form post's signed error redirect.
    UrlError,
    /// The contact form's proof-of-work challenges (ALTCHA's HMAC key).
    Altcha,
    /// The contact form's page stamp (when the page was served).
    ContactStamp,
    /// A one-time download's receipt (the client it was given to).
    Receipt,
    /// A person's address, as data requests and notification digests keep it.
    Address,
}

impl Purpose {
    /// The label mixed into the MAC (`None`: the audit log's original client hash).
    pub const fn label(self) -> Option<&'static str> {
        match self {
            Purpose::Client => None,
            Purpose::RateLimit => Some("ratelimit"),
            Purpose::UrlError => Some("url-error"),
            Purpose::Altcha => Some("altcha"),
            Purpose::ContactStamp => Some("contact-stamp"),
            Purpose::Receipt => Some("receipt"),
            Purpose::Address => Some("address"),
        }
    }
}

/// The loaded key. Cheap to share (`Arc` in the state); never printed.
pub struct Keyring {
    key: Vec<u8>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keyring(..)")
    }
}

impl Keyring {
    /// Loads (or creates, first writer wins) the key. An unreadable stored key is refused, naming
    /// its settings row: Ebb does not start with a key anyone could guess.
    pub async fn load(pool: &sqlx::PgPool) -> Result<Keyring, String> {
        let key = crate::settings::secret(pool, crate::settings::CLIENT_SECRET).await?;
        Ok(Keyring { key })
    }

    /// A keyring over `key` (at least [`crate::settings::SECRET_BYTES`] bytes): the tests' and
    /// the tools' own keys.
    pub fn with_key(key: Vec<u8>) -> Result<Keyring, String> {
        if key.len() < crate::settings::SECRET_BYTES {
            return Err(format!("a key has at least {} bytes", crate::settings::SECRET_BYTES));
        }
        Ok(Keyring { key })
    }

    /// HMAC-SHA256 of `data` for `purpose`, 128 bits in hex: nobody without the key can compute
    /// or reverse it, and it is valid for that purpose only.
    pub fn mac(&self, purpose: Purpose, data: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        if let Some(label) = purpose.label() {
            mac.update(label.as_bytes());
            mac.update(b"\0");
        }
        mac.update(data.as_bytes());
        hex::encode(&mac.finalize().into_bytes()[..16])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_purpose_keys_the_same_data_differently() {
        let ring = Keyring::with_key(vec![7; 32]).unwrap();
        let all = [Purpose::Client, Purpose::RateLimit, Purpose::UrlError, Purpose::Altcha, Purpose::ContactStamp, Purpose::Receipt, Purpose::Address];
        let values: std::collections::HashSet<String> = all.iter().map(|p| ring.mac(*p, "192.0.2.1")).collect();
        assert_eq!(values.len(), all.len(), "one value per purpose");
        assert_eq!(ring.mac(Purpose::Receipt, "x"), ring.mac(Purpose::Receipt, "x"), "stable");
        assert_ne!(ring.mac(Purpose::Receipt, "x"), Keyring::with_key(vec![8; 32]).unwrap().mac(Purpose::Receipt, "x"), "keyed");
        // The values Ebb stored before the keyring still match: the client hash is the HMAC of
        // the address alone, the others of `label ‖ 0 ‖ data`.
        let mut plain = Hmac::<Sha256>::new_from_slice(&[7; 32]).unwrap();
        plain.update(b"192.0.2.1");
        assert_eq!(ring.mac(Purpose::Client, "192.0.2.1"), hex::encode(&plain.finalize().into_bytes()[..16]));
        let mut labelled = Hmac::<Sha256>::new_from_slice(&[7; 32]).unwrap();
        labelled.update(b"address\0ann@example.org");
        assert_eq!(ring.mac(Purpose::Address, "ann@example.org"), hex::encode(&labelled.finalize().into_bytes()[..16]));
        assert!(Keyring::with_key(vec![1; 16]).is_err(), "a short key is refused");
    }
}
