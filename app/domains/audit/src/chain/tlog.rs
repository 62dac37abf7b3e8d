//! The transparency log (issue 53): an RFC 6962 Merkle tree over the sealed events in seal order,
//! published as C2SP tlog-tiles (`/audit/tile/…`) with C2SP tlog-checkpoint signed notes
//! (`/audit/checkpoint`), so that anyone can check with any tlog-tiles client — without Ebb's code
//! — that the log only ever grew: a rollback or a fork shows as two checkpoints that no
//! consistency proof joins.
//!
//! Entry `i` is the `i`-th event sealed (after this log began), as the ASCII text
//! `<month> <seq> <event id> <event hash, hex>`: its place in its month's chain and the chain's
//! hash there (which covers the event's canonical bytes and everything before it in the month).
//! The tree's hashes are kept as the Go and C2SP tlog code stores them ("stored hash index"), so
//! a tile is a list of stored hashes; tiles have height 8 (256 hashes). Appending happens in the
//! sealing transaction; signing a checkpoint happens in the job's digest step, with the digest key.

use std::collections::HashMap;

use ed25519_dalek::Signer as _;
use sqlx::PgConnection;
use tlog_tiles::{record_hash, stored_hash_index, stored_hashes_for_record_hash, tree_hash, Hash, HashReader};

use super::keys;
use kernel::state::AppState;

/// Tile height (C2SP tlog-tiles: 8, so 256 hashes per full tile).
pub const HEIGHT: u8 = 8;
/// Hashes or entries in a full tile.
pub const WIDTH: u64 = 1 << HEIGHT;

/// An entry's bytes (the leaf's data).
pub fn entry(month: &str, seq: i64, event: i64, hash: &[u8]) -> String {
    format!("{month} {seq} {event} {}", hex::encode(hash))
}

/// Hashes kept in memory while a batch is appended.
struct Memory(HashMap<u64, Hash>);

impl HashReader for Memory {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, tlog_tiles::Error> {
        indexes.iter().map(|i| self.0.get(i).copied().ok_or(tlog_tiles::Error::InvalidProof)).collect()
    }
}

/// The stored hashes a tree of size `n` needs to grow or to compute its root: the roots of the
/// complete subtrees that make up its leaves, left to right.
pub fn frontier(n: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut start = 0u64;
    for level in (0..64u8).rev() {
        if (n >> level) & 1 == 1 {
            out.push(stored_hash_index(level, start >> level));
            start += 1u64 << level;
        }
    }
    out
}

/// Appends sealed events (`(event id, month, seq, hash)`, in seal order) to the log, in the
/// caller's transaction (the sealing one: the log grows exactly when the chains do). The head
/// row is locked, so appends take turns.
pub async fn append(tx: &mut PgConnection, events: &[(i64, String, i64, Vec<u8>)]) -> Result<(), sqlx::Error> {
    if events.is_empty() {
        return Ok(());
    }
    let size: i64 = sqlx::query_scalar!("select size from audit_tlog_head for update").fetch_one(&mut *tx).await?;
    let start = size as u64;
    let known: Vec<(i64, Vec<u8>)> = sqlx::query_as("select index, hash from audit_tlog_hashes where index = any($1)")
        .bind(frontier(start).into_iter().map(|i| i as i64).collect::<Vec<_>>())
        .fetch_all(&mut *tx)
        .await?;
    let mut memory = Memory(known.into_iter().filter_map(|(i, h)| Some((i as u64, Hash(h.try_into().ok()?)))).collect());
    let (mut indexes, mut hashes) = (Vec::new(), Vec::new());
    let (mut entry_index, mut entry_text) = (Vec::with_capacity(events.len()), Vec::with_capacity(events.len()));
    for (i, (id, month, seq, hash)) in events.iter().enumerate() {
        let n = start + i as u64;
        let text = entry(month, *seq, *id, hash);
        let stored = stored_hashes_for_record_hash(n, record_hash(text.as_bytes()), &memory)
            .map_err(|e| sqlx::Error::Protocol(format!("the transparency log cannot grow: {e} (a stored hash is missing)")))?;
        let first = stored_hash_index(0, n);
        for (k, h) in stored.into_iter().enumerate() {
            memory.0.insert(first + k as u64, h);
            indexes.push((first + k as u64) as i64);
            hashes.push(h.0.to_vec());
        }
        entry_index.push(n as i64);
        entry_text.push(text);
    }
    let end = start + events.len() as u64;
    let root = tree_hash(end, &memory).map_err(|e| sqlx::Error::Protocol(format!("the transparency log's root: {e}")))?;
    sqlx::query("insert into audit_tlog_entries (index, entry) select * from unnest($1::bigint[], $2::text[])")
        .bind(&entry_index)
        .bind(&entry_text)
        .execute(&mut *tx)
        .await?;
    sqlx::query("insert into audit_tlog_hashes (index, hash) select * from unnest($1::bigint[], $2::bytea[])")
        .bind(&indexes)
        .bind(&hashes)
        .execute(&mut *tx)
        .await?;
    sqlx::query!("update audit_tlog_head set size = $1, root = $2", end as i64, root.0.as_slice()).execute(&mut *tx).await?;
    Ok(())
}

/// The log's origin line (and the checkpoint key's name): `<host>/audit` of the public URL.
pub fn origin(public_url: &str) -> String {
    let rest = public_url.split_once("://").map_or(public_url, |(_, r)| r);
    format!("{}/audit", rest.trim_end_matches('/'))
}

/// The signed-note verifier key of the digest key `public` for `origin`
/// (`<name>+<id, 8 hex>+<base64 of 0x01 ‖ key>`), as `/audit/keys.json` lists it.
pub fn verifier_key(origin: &str, public: &ed25519_dalek::VerifyingKey) -> String {
    signed_note::new_ed25519_verifier_key(origin, public)
}

/// Signs the log's head as a checkpoint when it grew since the last one (the job's digest step,
/// every minute). Returns the size signed, or `None` when nothing changed.
pub async fn checkpoint(state: &AppState) -> Result<Option<i64>, String> {
    let db = |e: sqlx::Error| format!("database: {e}");
    let head = sqlx::query!(r#"select h.size, h.root, (select max(size) from audit_tlog_checkpoints) as "signed?" from audit_tlog_head h"#)
        .fetch_one(&state.pool)
        .await
        .map_err(db)?;
    if head.signed.is_some_and(|s| s >= head.size) || (head.size == 0 && head.signed.is_some()) {
        return Ok(None);
    }
    let signer = keys::signer(state).await?;
    let origin = &state.domain::<super::ChainSettings>().log_origin;
    let root: [u8; 32] = head.root.try_into().map_err(|_| "the transparency log's root is malformed".to_string())?;
    let cp = tlog_tiles::Checkpoint::new(origin, head.size as u64, Hash(root), "").map_err(|e| format!("checkpoint: {e}"))?;
    let note = sign_note(&cp.to_bytes(), origin, &signer.key)?;
    sqlx::query!("insert into audit_tlog_checkpoints (size, root, note) values ($1, $2, $3) on conflict (size) do nothing", head.size, root.as_slice(), note)
        .execute(&state.pool)
        .await
        .map_err(db)?;
    Ok(Some(head.size))
}

/// A signed note (C2SP signed-note, Ed25519) of `text`, signed as `name` by `key`.
pub fn sign_note(text: &[u8], name: &str, key: &ed25519_dalek::SigningKey) -> Result<String, String> {
    struct NoteSigner<'a> {
        name: &'a str,
        id: u32,
        key: &'a ed25519_dalek::SigningKey,
    }
    impl signed_note::Signer for NoteSigner<'_> {
        fn name(&self) -> &str {
            self.name
        }
        fn key_id(&self) -> u32 {
            self.id
        }
        fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, ed25519_dalek::SignatureError> {
            Ok(self.key.sign(msg).to_bytes().to_vec())
        }
    }
    let mut public = vec![0x01];
    public.extend_from_slice(key.verifying_key().as_bytes());
    let signer = NoteSigner { name, id: signed_note::key_id(name, &public), key };
    let mut note = signed_note::Note::new(text, &[]).map_err(|e| format!("checkpoint note: {e}"))?;
    let signers: [&dyn signed_note::Signer; 1] = [&signer];
    note.add_sigs(&signers).map_err(|e| format!("checkpoint note: {e}"))?;
    String::from_utf8(note.to_bytes()).map_err(|e| e.to_string())
}

/// The newest signed checkpoint (what `/audit/checkpoint` serves).
pub async fn latest(pool: &sqlx::PgPool) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!("select note from audit_tlog_checkpoints order by size desc limit 1").fetch_optional(pool).await
}

/// A C2SP tlog-tiles path below `tile/`: a hash tile `(level, index, width)` or an entry bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TilePath {
    Hashes { level: u8, index: u64, width: u64 },
    Entries { index: u64, width: u64 },
}

/// Parses `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]` (N in 3-digit groups, all but the last
/// prefixed `x`); anything else, or a spelling that is not the canonical one, is `None`.
pub fn parse_tile_path(path: &str) -> Option<TilePath> {
    let (body, width) = match path.split_once(".p/") {
        Some((p, w)) => (p, w.parse::<u64>().ok().filter(|w| (1..WIDTH).contains(w))?),
        None => (path, WIDTH),
    };
    let (first, digits) = body.split_once('/')?;
    let mut index = 0u64;
    for group in digits.split('/') {
        let d = group.strip_prefix('x').unwrap_or(group);
        if d.len() != 3 || !d.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        index = index.checked_mul(1000)?.checked_add(d.parse().ok()?)?;
    }
    let tile = match first {
        "entries" => TilePath::Entries { index, width },
        level => TilePath::Hashes { level: level.parse::<u8>().ok().filter(|l| *l < 8)?, index, width },
    };
    // The canonical spelling only: one path per tile (caches, and no aliasing).
    (tile_path(tile) == path).then_some(tile)
}

/// A tile's path below `tile/`, spelled as C2SP tlog-tiles spells it.
pub fn tile_path(tile: TilePath) -> String {
    let (head, index, width) = match tile {
        TilePath::Hashes { level, index, width } => (level.to_string(), index, width),
        TilePath::Entries { index, width } => ("entries".to_string(), index, width),
    };
    let mut n = index;
    let mut digits = format!("{:03}", n % 1000);
    while n >= 1000 {
        n /= 1000;
        digits = format!("x{:03}/{digits}", n % 1000);
    }
    let partial = if width == WIDTH { String::new() } else { format!(".p/{width}") };
    format!("{head}/{digits}{partial}")
}

/// A tile's bytes, for a tree of the log's current size; `None` when the tree does not have it
/// (yet): a full tile not complete, a partial one past the end.
pub async fn tile(pool: &sqlx::PgPool, tile: TilePath) -> Result<Option<Vec<u8>>, sqlx::Error> {
    let size = sqlx::query_scalar!("select size from audit_tlog_head").fetch_one(pool).await? as u64;
    match tile {
        TilePath::Hashes { level, index, width } => {
            let level_bits = u32::from(level) * u32::from(HEIGHT);
            // The last hash of the tile covers leaves up to ((index*256 + width) << level_bits).
            let Some(end) = index.checked_mul(WIDTH).and_then(|s| s.checked_add(width)).and_then(|e| e.checked_shl(level_bits)) else { return Ok(None) };
            if end > size || end >> level_bits != index * WIDTH + width {
                return Ok(None);
            }
            let wanted: Vec<i64> = (0..width).map(|i| stored_hash_index(level * HEIGHT, index * WIDTH + i) as i64).collect();
            let rows: Vec<(i64, Vec<u8>)> =
                sqlx::query_as("select index, hash from audit_tlog_hashes where index = any($1)").bind(&wanted).fetch_all(pool).await?;
            let found: HashMap<i64, Vec<u8>> = rows.into_iter().collect();
            let mut out = Vec::with_capacity(wanted.len() * 32);
            for i in &wanted {
                let Some(h) = found.get(i) else { return Ok(None) };
                out.extend_from_slice(h);
            }
            Ok(Some(out))
        }
        TilePath::Entries { index, width } => {
            let Some(first) = index.checked_mul(WIDTH) else { return Ok(None) };
            if first + width > size {
                return Ok(None);
            }
            let rows: Vec<String> = sqlx::query_scalar("select entry from audit_tlog_entries where index >= $1 and index < $2 order by index")
                .bind(first as i64)
                .bind((first + width) as i64)
                .fetch_all(pool)
                .await?;
            if rows.len() as u64 != width {
                return Ok(None);
            }
            // An entry bundle: each entry as a big-endian 16-bit length and its bytes.
            let mut out = Vec::new();
            for e in rows {
                out.extend_from_slice(&(e.len() as u16).to_be_bytes());
                out.extend_from_slice(e.as_bytes());
            }
            Ok(Some(out))
        }
    }
}

/// The RFC 6962 root of the log's first `n` entries as the database holds them, streamed (the
/// perfect subtrees of the binary decomposition on a stack: memory O(log n)). `None` when the
/// database holds fewer than `n` entries.
pub async fn root_of_entries(pool: &sqlx::PgPool, n: i64) -> Result<Option<[u8; 32]>, sqlx::Error> {
    use futures::TryStreamExt;
    let mut stack: Vec<(u64, Hash)> = Vec::new();
    let mut seen = 0i64;
    let mut rows = sqlx::query_scalar::<_, String>("select entry from audit_tlog_entries where index < $1 order by index").bind(n).fetch(pool);
    while let Some(entry) = rows.try_next().await? {
        seen += 1;
        stack.push((1, record_hash(entry.as_bytes())));
        while stack.len() >= 2 && stack[stack.len() - 1].0 == stack[stack.len() - 2].0 {
            let (size, right) = stack.pop().expect("two");
            let (_, left) = stack.pop().expect("two");
            stack.push((size * 2, tlog_tiles::node_hash(left, right)));
        }
    }
    if seen != n {
        return Ok(None);
    }
    let root = stack.iter().rev().fold(None, |acc: Option<Hash>, (_, h)| Some(acc.map_or(*h, |right| tlog_tiles::node_hash(*h, right))));
    Ok(Some(root.unwrap_or(tlog_tiles::EMPTY_HASH).0))
}

/// Checks the log the database holds against its newest signed checkpoint: the signature by one
/// of `keys`, and the root of that many entries recomputed from the entries themselves. `Ok`:
/// the checkpoint's size (0: none signed yet); `Err`: why the log cannot be trusted.
pub async fn check_entries(pool: &sqlx::PgPool, keys: &[super::keys::PublicKey]) -> Result<Result<i64, String>, sqlx::Error> {
    let Some(note) = latest(pool).await? else { return Ok(Ok(0)) };
    let (size, signed_root) = match open_checkpoint(&note, keys) {
        Ok(cp) => (cp.size() as i64, cp.hash().0),
        Err(why) => return Ok(Err(why)),
    };
    Ok(match root_of_entries(pool, size).await? {
        Some(root) if root == signed_root => Ok(size),
        Some(_) => Err(format!("the log's first {size} entries in the database are not the ones its signed checkpoint covers: they were rewritten")),
        None => Err(format!("the database holds fewer than the {size} entries its signed checkpoint covers: entries were deleted")),
    })
}

/// A signed checkpoint read: signed by one of `keys` under its origin's name.
pub fn open_checkpoint(note: &str, keys: &[super::keys::PublicKey]) -> Result<tlog_tiles::Checkpoint, String> {
    let parsed = signed_note::Note::from_bytes(note.as_bytes()).map_err(|e| format!("the newest checkpoint is not a signed note ({e})"))?;
    let cp = tlog_tiles::Checkpoint::from_bytes(parsed.text()).map_err(|_| "the newest checkpoint is malformed".to_string())?;
    let mut verifiers: Vec<Box<dyn signed_note::Verifier>> = Vec::new();
    for k in keys.iter().filter_map(super::keys::PublicKey::verifying_key) {
        if let Ok(v) = signed_note::StandardVerifier::new(&verifier_key(cp.origin(), &k)) {
            verifiers.push(Box::new(v));
        }
    }
    if !parsed.verify(&signed_note::VerifierList::new(verifiers)).is_ok_and(|(ok, _)| !ok.is_empty()) {
        return Err(format!("the checkpoint of {} entries is not signed by a trusted key", cp.size()));
    }
    Ok(cp)
}

/// The chain hashes the log recorded for `month` (`YYYY-MM`), by place — what each event's hash
/// was when it was sealed.
pub async fn sealed_hashes(pool: &sqlx::PgPool, month: &str, below: i64) -> Result<HashMap<i64, String>, sqlx::Error> {
    let rows: Vec<String> =
        sqlx::query_scalar("select entry from audit_tlog_entries where index < $2 and entry like $1 || ' %'").bind(month).bind(below).fetch_all(pool).await?;
    Ok(rows
        .into_iter()
        .filter_map(|e| {
            let mut parts = e.split(' ');
            let (_, seq, _, hash) = (parts.next()?, parts.next()?.parse().ok()?, parts.next()?, parts.next()?);
            Some((seq, hash.to_string()))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_paths_are_spelled_and_parsed_as_c2sp_does() {
        for (path, tile) in [
            ("0/000", TilePath::Hashes { level: 0, index: 0, width: 256 }),
            ("0/x001/x234/067.p/8", TilePath::Hashes { level: 0, index: 1_234_067, width: 8 }),
            ("2/001.p/255", TilePath::Hashes { level: 2, index: 1, width: 255 }),
            ("entries/x001/000", TilePath::Entries { index: 1000, width: 256 }),
        ] {
            assert_eq!(parse_tile_path(path), Some(tile), "{path}");
            assert_eq!(tile_path(tile), path);
        }
        for bad in ["", "0", "0/1", "0/0001", "0/x000", "0/000.p/0", "0/000.p/256", "0/000.p/08", "9/000", "00/000", "data/000", "0/x01/000", "0/000/"] {
            assert_eq!(parse_tile_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_frontier_is_the_complete_subtrees_left_to_right() {
        assert_eq!(frontier(0), Vec::<u64>::new());
        assert_eq!(frontier(1), vec![stored_hash_index(0, 0)]);
        assert_eq!(frontier(6), vec![stored_hash_index(2, 0), stored_hash_index(1, 2)]);
    }
}
