//! Read URLs signed by Ebb for backends that cannot presign (the local folder): an HMAC-SHA256
//! over key, expiry and download name, checked in constant time, served by Ebb at `/blob`.

use hmac::{Hmac, Mac};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// What stays literal in a query value (RFC 3986 unreserved).
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
use sha2::Sha256;

/// Why a signed URL was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignedUrlError {
    /// Wrong or missing signature (tampered key, expiry or name; another installation's link).
    #[error("this link is not valid")]
    Invalid,
    #[error("this link has expired")]
    Expired,
}

/// Signs and checks read URLs.
#[derive(Clone)]
pub struct UrlSigner {
    secret: Vec<u8>,
    base: String,
}

impl std::fmt::Debug for UrlSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UrlSigner").field("base", &self.base).finish_non_exhaustive()
    }
}

/// The path Ebb serves signed reads on.
pub const PATH: &str = "/blob";

impl UrlSigner {
    pub fn new(secret: Vec<u8>, public_url: &str) -> Self {
        UrlSigner { secret, base: public_url.trim_end_matches('/').to_owned() }
    }

    fn mac(&self, key: &str, expires: i64, name: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC takes any key length");
        // Key and expiry hold no newline; the name is last, so the message is unambiguous.
        mac.update(format!("ebb-blob-url-v1\n{key}\n{expires}\n").as_bytes());
        mac.update(name.as_bytes());
        mac
    }

    /// The URL reading `key` until `expires` (Unix seconds), downloaded as `name`.
    pub fn url(&self, key: &str, expires: i64, name: &str) -> String {
        let sig = hex::encode(self.mac(key, expires, name).finalize().into_bytes());
        let enc = |s: &str| utf8_percent_encode(s, QUERY_VALUE).to_string();
        format!("{}{PATH}?key={}&expires={expires}&name={}&sig={sig}", self.base, enc(key), enc(name))
    }

    /// Checks a URL's parts at `now` (Unix seconds): the signature first (constant time), then the
    /// expiry, so nothing about a forged link is revealed.
    pub fn verify(&self, key: &str, expires: i64, name: &str, sig_hex: &str, now: i64) -> Result<(), SignedUrlError> {
        let sig = hex::decode(sig_hex).map_err(|_| SignedUrlError::Invalid)?;
        self.mac(key, expires, name).verify_slice(&sig).map_err(|_| SignedUrlError::Invalid)?;
        if now >= expires {
            return Err(SignedUrlError::Expired);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(url: &str) -> (String, i64, String, String) {
        let q = url.split_once('?').unwrap().1;
        let get = |k: &str| {
            let raw = q.split('&').find_map(|p| p.strip_prefix(&format!("{k}="))).unwrap();
            percent_encoding::percent_decode_str(raw).decode_utf8().unwrap().into_owned()
        };
        (get("key"), get("expires").parse().unwrap(), get("name"), get("sig"))
    }

    #[test]
    fn a_signed_url_checks_until_it_expires_and_not_when_anything_changed() {
        let s = UrlSigner::new(b"secret-one".to_vec(), "http://localhost:3000/");
        let url = s.url("audit-archive/2024-05.csv.gz", 1_000, "2024-05 & co \"x\".csv.gz");
        assert!(url.starts_with("http://localhost:3000/blob?key=audit-archive%2F2024-05.csv.gz&expires=1000&name="), "{url}");
        let (key, exp, name, sig) = parts(&url);
        assert_eq!(name, "2024-05 & co \"x\".csv.gz");
        assert_eq!(s.verify(&key, exp, &name, &sig, 999), Ok(()));
        assert_eq!(s.verify(&key, exp, &name, &sig, 1_000), Err(SignedUrlError::Expired));
        assert_eq!(s.verify("audit-archive/2024-06.csv.gz", exp, &name, &sig, 0), Err(SignedUrlError::Invalid));
        assert_eq!(s.verify(&key, exp + 3600, &name, &sig, 0), Err(SignedUrlError::Invalid));
        assert_eq!(s.verify(&key, exp, "other.csv.gz", &sig, 0), Err(SignedUrlError::Invalid));
        assert_eq!(s.verify(&key, exp, &name, "zz", 0), Err(SignedUrlError::Invalid));
        assert_eq!(s.verify(&key, exp, &name, &sig[..10], 0), Err(SignedUrlError::Invalid));
        let other = UrlSigner::new(b"secret-two".to_vec(), "http://localhost:3000");
        assert_eq!(other.verify(&key, exp, &name, &sig, 0), Err(SignedUrlError::Invalid));
    }
}
