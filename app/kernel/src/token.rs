//! Secret link tokens (invites, shares): made here, and only their SHA-256 hash is stored.

use base64::{engine::general_purpose::URL_SAFE_NO_PAD, Engine as _};
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Length of a token: 32 random bytes in unpadded URL-safe base64.
const TOKEN_LEN: usize = 43;

/// A new 256-bit random token (URL-safe base64) and the SHA-256 hash we store instead of it.
pub fn new_token() -> (String, Vec<u8>) {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let token = URL_SAFE_NO_PAD.encode(bytes);
    let hash = hash_token(&token);
    (token, hash)
}

/// The stored form of a token.
pub fn hash_token(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// The stored hash of a well-formed token; `None` for anything that cannot be one (answered
/// exactly like an unknown token, without a query).
pub fn well_formed_hash(token: &str) -> Option<Vec<u8>> {
    let well_formed = token.len() == TOKEN_LEN && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    well_formed.then(|| hash_token(token))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_well_formed_tokens_are_looked_up() {
        let (token, hash) = new_token();
        assert_eq!(well_formed_hash(&token), Some(hash));
        for bad in ["", "short", &"a".repeat(44), &format!("{}/", &token[..42]), &format!("{}%", &token[..42])] {
            assert_eq!(well_formed_hash(bad), None, "{bad:?}");
        }
    }
}
