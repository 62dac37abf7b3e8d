//! Witness cosignatures on the transparency log's checkpoints (C2SP tlog-cosignature v1,
//! Ed25519). The operator names the witnesses Ebb trusts (`EBB_AUDIT_WITNESSES`: their verifier
//! keys); a witness that checked a checkpoint's consistency posts the checkpoint back with its
//! cosignature line (`POST /audit/checkpoint`); Ebb keeps a line only when it verifies against
//! that witness's key over that checkpoint, and serves it after its own signature, so a client
//! with a quorum policy sees which witnesses saw the same log. A cosignature adds to the log's
//! own signature; it never replaces it.

use ed25519_dalek::{Signature, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};

/// The signature type byte of an Ed25519 cosigner key (C2SP tlog-cosignature).
const COSIGNATURE_V1_ED25519: u8 = 0x04;
/// A cosignature dated further ahead than this is refused (a wrong clock, or a replay setup).
const MAX_AHEAD_SECS: u64 = 600;

/// A witness Ebb trusts: its name (the signature line's key name), key id and public key.
#[derive(Debug, Clone)]
pub struct Witness {
    pub name: String,
    id: u32,
    key: VerifyingKey,
}

impl Witness {
    /// From a verifier key `<name>+<8 hex: key id>+<base64(0x04 || 32-byte Ed25519 key)>`.
    pub fn parse(vkey: &str) -> Result<Witness, String> {
        use base64::Engine;
        let bad = |why: &str| format!("witness key {vkey:?}: {why} (expected <name>+<key id>+<base64 key> with type 0x04, as C2SP tlog-cosignature gives it)");
        let mut parts = vkey.trim().splitn(3, '+');
        let (Some(name), Some(id_hex), Some(b64)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad("three parts joined by '+'"));
        };
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == '+' || c.is_control()) {
            return Err(bad("a name without spaces or '+'"));
        }
        let id = u32::from_str_radix(id_hex, 16).ok().filter(|_| id_hex.len() == 8).ok_or_else(|| bad("an 8-digit hex key id"))?;
        let raw = base64::engine::general_purpose::STANDARD.decode(b64).map_err(|_| bad("a base64 key"))?;
        let [COSIGNATURE_V1_ED25519, key @ ..] = raw.as_slice() else {
            return Err(bad("the key's type byte 0x04 (an Ed25519 cosignature/v1 key)"));
        };
        let key: [u8; 32] = key.try_into().map_err(|_| bad("a 32-byte Ed25519 key"))?;
        let key = VerifyingKey::from_bytes(&key).map_err(|_| bad("a valid Ed25519 key"))?;
        if key_id(name, &key) != id {
            return Err(bad("a key id that matches its name and key"));
        }
        Ok(Witness { name: name.to_owned(), id, key })
    }
}

/// SHA-256(name || "\n" || 0x04 || key)[:4].
pub fn key_id(name: &str, key: &VerifyingKey) -> u32 {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update(b"\n");
    h.update([COSIGNATURE_V1_ED25519]);
    h.update(key.as_bytes());
    u32::from_be_bytes(h.finalize()[..4].try_into().expect("4 bytes"))
}

/// What a cosigner signs: the header line, the time line and the checkpoint's body.
pub fn message(time: u64, body: &[u8]) -> Vec<u8> {
    let mut m = format!("cosignature/v1\ntime {time}\n").into_bytes();
    m.extend_from_slice(body);
    m
}

/// The body of a signed note (its text, through the blank line before the signatures) and its
/// signature lines.
pub fn split_note(note: &str) -> Option<(&str, Vec<&str>)> {
    let at = note.rfind("\n\n")?;
    let (body, sigs) = (&note[..at + 1], &note[at + 2..]);
    Some((body, sigs.lines().filter(|l| !l.is_empty()).collect()))
}

/// A cosignature line checked against `witnesses` over `body`; `Ok(None)`: the line is not a
/// configured witness's (another signer's, ignored); `Err`: a witness's line that does not verify.
pub fn check_line(witnesses: &[Witness], body: &str, line: &str, now: u64) -> Result<Option<(String, u64)>, String> {
    let Ok(sig) = signed_note::Signature::from_bytes(line.as_bytes()) else {
        return Err(format!("not a signature line: {line:?}"));
    };
    let Some(w) = witnesses.iter().find(|w| w.name == sig.name() && w.id == sig.id()) else {
        return Ok(None);
    };
    let bytes = sig.signature();
    let (Some(time), Some(ed)) = (bytes.get(..8), bytes.get(8..)) else {
        return Err(format!("the cosignature of {} is too short", w.name));
    };
    let time = u64::from_be_bytes(time.try_into().expect("8 bytes"));
    if time > now + MAX_AHEAD_SECS || time > i64::MAX as u64 {
        return Err(format!("the cosignature of {} is dated in the future ({time})", w.name));
    }
    let ed = Signature::from_slice(ed).map_err(|_| format!("the cosignature of {} is not an Ed25519 signature", w.name))?;
    w.key.verify(&message(time, body.as_bytes()), &ed).map_err(|_| format!("the cosignature of {} does not verify over this checkpoint", w.name))?;
    Ok(Some((w.name.clone(), time)))
}

/// Takes a checkpoint a witness posted back with its cosignature(s): the checkpoint must be one
/// Ebb signed; each line of a configured witness must verify. Returns the names kept.
pub async fn accept(pool: &sqlx::PgPool, witnesses: &[Witness], posted: &str) -> Result<Vec<String>, CosignError> {
    let (body, lines) = split_note(posted).ok_or(CosignError::Refused("not a signed note: the checkpoint, a blank line, then signature lines".into()))?;
    let cp = tlog_tiles::Checkpoint::from_bytes(body.as_bytes()).map_err(|_| CosignError::Refused("the note's text is not a checkpoint".into()))?;
    let size = i64::try_from(cp.size()).map_err(|_| CosignError::Refused("the checkpoint's size is out of range".into()))?;
    let ours: Option<String> = sqlx::query_scalar("select note from audit_tlog_checkpoints where size = $1").bind(size).fetch_optional(pool).await?;
    let signed_by_us = ours.is_some_and(|n| split_note(&n).is_some_and(|(b, _)| b == body));
    if !signed_by_us {
        return Err(CosignError::Refused(format!("Ebb signed no checkpoint with this text (size {size})")));
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut kept = Vec::new();
    for line in lines {
        let Some((name, time)) = check_line(witnesses, body, line, now).map_err(CosignError::Refused)? else { continue };
        let at = time::OffsetDateTime::from_unix_timestamp(time as i64).map_err(|_| CosignError::Refused("the cosignature's time is out of range".into()))?;
        // The newest cosignature of each witness for a checkpoint is kept.
        sqlx::query(
            "insert into audit_tlog_cosignatures (size, witness, line, signed_at) values ($1, $2, $3, $4)
             on conflict (size, witness) do update set line = excluded.line, signed_at = excluded.signed_at
             where audit_tlog_cosignatures.signed_at < excluded.signed_at",
        )
        .bind(size)
        .bind(&name)
        .bind(line)
        .bind(at)
        .execute(pool)
        .await?;
        kept.push(name);
    }
    if kept.is_empty() {
        return Err(CosignError::Refused("no cosignature of a configured witness (EBB_AUDIT_WITNESSES) is in the note".into()));
    }
    Ok(kept)
}

/// The newest checkpoint with the cosignatures kept for it, after Ebb's own signature.
pub async fn latest_cosigned(pool: &sqlx::PgPool) -> Result<Option<String>, sqlx::Error> {
    let Some((size, mut note)) =
        sqlx::query_as::<_, (i64, String)>("select size, note from audit_tlog_checkpoints order by size desc limit 1").fetch_optional(pool).await?
    else {
        return Ok(None);
    };
    let lines: Vec<String> = sqlx::query_scalar("select line from audit_tlog_cosignatures where size = $1 order by witness").bind(size).fetch_all(pool).await?;
    for line in lines {
        if !note.ends_with('\n') {
            note.push('\n');
        }
        note.push_str(&line);
        note.push('\n');
    }
    Ok(Some(note))
}

/// Why a posted cosignature was not kept.
#[derive(Debug, thiserror::Error)]
pub enum CosignError {
    #[error("{0}")]
    Refused(String),
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn witness(name: &str, seed: u8) -> (ed25519_dalek::SigningKey, String) {
        let sk = ed25519_dalek::SigningKey::from_bytes(&[seed; 32]);
        let vk = sk.verifying_key();
        let mut raw = vec![COSIGNATURE_V1_ED25519];
        raw.extend_from_slice(vk.as_bytes());
        (sk, format!("{name}+{:08x}+{}", key_id(name, &vk), base64::engine::general_purpose::STANDARD.encode(raw)))
    }

    fn line(name: &str, sk: &ed25519_dalek::SigningKey, time: u64, body: &str) -> String {
        use ed25519_dalek::Signer;
        let sig = sk.sign(&message(time, body.as_bytes()));
        let mut raw = key_id(name, &sk.verifying_key()).to_be_bytes().to_vec();
        raw.extend_from_slice(&time.to_be_bytes());
        raw.extend_from_slice(&sig.to_bytes());
        format!("— {name} {}", base64::engine::general_purpose::STANDARD.encode(raw))
    }

    #[test]
    fn a_witness_line_verifies_over_its_checkpoint_only() {
        let (sk, vkey) = witness("witness.example/w1", 7);
        let w = vec![Witness::parse(&vkey).unwrap()];
        let body = "ebb.example/audit\n20\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
        let ok = line("witness.example/w1", &sk, 1_700_000_000, body);
        assert_eq!(check_line(&w, body, &ok, 1_700_000_100).unwrap(), Some(("witness.example/w1".into(), 1_700_000_000)));
        let other = "ebb.example/audit\n21\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n";
        assert!(check_line(&w, other, &ok, 1_700_000_100).unwrap_err().contains("does not verify"));
        let future = line("witness.example/w1", &sk, 1_700_010_000, body);
        assert!(check_line(&w, body, &future, 1_700_000_100).unwrap_err().contains("future"));
        let (stranger, _) = witness("witness.example/w1", 8);
        let forged = line("witness.example/w1", &stranger, 1_700_000_000, body);
        assert_eq!(check_line(&w, body, &forged, 1_700_000_100).unwrap(), None, "another key id: not this witness's line");
        let (_, other_vkey) = witness("other.example/w", 9);
        assert!(Witness::parse(&other_vkey.replace("other.example/w", "renamed.example/w")).is_err(), "the key id binds the name");
        assert!(Witness::parse("w+0000+AAAA").is_err());
    }
}
