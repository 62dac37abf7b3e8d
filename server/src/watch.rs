//! `ebb audit watch URL`: a witness of Ebb's transparency log, from outside. It keeps the last
//! checkpoint it saw (a file), fetches the newest, checks its signature with the keys it trusts,
//! and proves with the log's own tiles that the new tree contains the old one (an RFC 6962
//! consistency proof). A smaller tree (a rollback) or two trees no proof joins (a fork, or a
//! rewrite) is an error naming both sizes; the saved checkpoint is then left as it was.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

use app::audit::chain::keys::PublicKey;
use app::audit::chain::tlog as log;
use tlog_tiles::{check_tree, prove_tree, Checkpoint, Tile, TileHashReader, TileReader};

/// A checkpoint read and its signature checked.
struct Seen {
    note: String,
    checkpoint: Checkpoint,
}

/// Checks `note` (a signed checkpoint) against `keys`: signed by one of them as the log's origin.
fn open(note: &str, keys: &[PublicKey]) -> Result<Seen, String> {
    let parsed = signed_note::Note::from_bytes(note.as_bytes()).map_err(|e| format!("not a signed note ({e})"))?;
    let checkpoint = Checkpoint::from_bytes(parsed.text()).map_err(|e| format!("not a checkpoint ({e})"))?;
    let mut verifiers: Vec<Box<dyn signed_note::Verifier>> = Vec::new();
    for k in keys.iter().filter_map(PublicKey::verifying_key) {
        let vkey = log::verifier_key(checkpoint.origin(), &k);
        verifiers.push(Box::new(signed_note::StandardVerifier::new(&vkey).map_err(|e| format!("verifier key: {e}"))?));
    }
    let (verified, _) =
        parsed.verify(&signed_note::VerifierList::new(verifiers)).map_err(|e| format!("its signature does not verify with the trusted keys ({e})"))?;
    if verified.is_empty() {
        return Err("it is not signed by any trusted key".into());
    }
    Ok(Seen { note: note.to_string(), checkpoint })
}

/// Tiles fetched over HTTP: what a proof asks for and is not fetched yet is noted, fetched by
/// the caller, and the proof is tried again (the proof code is synchronous).
struct Tiles {
    cache: RefCell<HashMap<String, Vec<u8>>>,
    missing: RefCell<Vec<String>>,
}

/// The C2SP path (below `/audit/`) of a tile as the Go-style code names it (`tile/8/…`).
pub fn c2sp_path(tile: &Tile) -> String {
    let go = tile.path();
    let rest = go.strip_prefix("tile/8/").unwrap_or(&go);
    format!("tile/{}", rest.replacen("data/", "entries/", 1))
}

impl TileReader for Tiles {
    fn height(&self) -> u8 {
        log::HEIGHT
    }

    fn read_tiles(&self, tiles: &[Tile]) -> Result<Vec<Vec<u8>>, tlog_tiles::Error> {
        let cache = self.cache.borrow();
        let mut out = Vec::new();
        for t in tiles {
            match cache.get(&c2sp_path(t)) {
                Some(d) => out.push(d.clone()),
                None => self.missing.borrow_mut().push(c2sp_path(t)),
            }
        }
        if self.missing.borrow().is_empty() {
            Ok(out)
        } else {
            Err(tlog_tiles::Error::InvalidProof)
        }
    }

    fn save_tiles(&self, _: &[Tile], _: &[Vec<u8>]) {}
}

async fn get(client: &reqwest::Client, url: &str) -> Result<Vec<u8>, String> {
    let res = client.get(url).send().await.map_err(|e| format!("cannot fetch {url} ({e})"))?;
    if !res.status().is_success() {
        return Err(format!("{url} answered {}", res.status()));
    }
    Ok(res.bytes().await.map_err(|e| format!("cannot read {url} ({e})"))?.to_vec())
}

/// Proves that the tree of `new` contains the tree of `old`, fetching the tiles it needs.
async fn consistent(client: &reqwest::Client, base: &str, old: &Checkpoint, new: &Checkpoint) -> Result<(), String> {
    let tiles = Tiles { cache: RefCell::new(HashMap::new()), missing: RefCell::new(Vec::new()) };
    for _ in 0..16 {
        let proof = {
            let reader = TileHashReader::new(new.size(), *new.hash(), &tiles);
            prove_tree(new.size(), old.size(), &reader)
        };
        let wanted: Vec<String> = tiles.missing.borrow_mut().drain(..).collect();
        if wanted.is_empty() {
            let proof = proof.map_err(|e| format!("the log's tiles do not match its checkpoint ({e})"))?;
            return check_tree(&proof, new.size(), *new.hash(), old.size(), *old.hash()).map_err(|e| e.to_string());
        }
        for path in wanted {
            let bytes = get(client, &format!("{base}/audit/{path}")).await?;
            tiles.cache.borrow_mut().insert(path, bytes);
        }
    }
    Err("the proof needed more tiles than a log of this size has".into())
}

/// Watches the log at `base` (its public URL) with `keys`, keeping its last checkpoint in
/// `state`. Returns what it saw, or why the log cannot be trusted (rolled back, forked).
pub async fn watch(base: &str, keys: &[PublicKey], state: &Path) -> Result<String, String> {
    let base = base.trim_end_matches('/');
    let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(30)).build().map_err(|e| e.to_string())?;
    let text = String::from_utf8(get(&client, &format!("{base}/audit/checkpoint")).await?).map_err(|_| "the checkpoint is not UTF-8".to_string())?;
    let new = open(&text, keys).map_err(|e| format!("the checkpoint of {base} cannot be trusted: {e}"))?;
    let (size, root) = (new.checkpoint.size(), new.checkpoint.hash().to_string());
    let old = match std::fs::read_to_string(state) {
        Ok(saved) => Some(open(&saved, keys).map_err(|e| format!("the saved checkpoint {} cannot be trusted: {e}", state.display()))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {} ({e})", state.display())),
    };
    let said = match &old {
        None => format!("first checkpoint: {size} entries, root {root}"),
        Some(old) => {
            let was = old.checkpoint.size();
            if old.checkpoint.origin() != new.checkpoint.origin() {
                return Err(format!("the log's origin changed from {} to {}", old.checkpoint.origin(), new.checkpoint.origin()));
            }
            if size < was {
                return Err(format!("the log was ROLLED BACK: it had {was} entries, it now has {size}"));
            }
            consistent(&client, base, &old.checkpoint, &new.checkpoint).await.map_err(|e| {
                format!("the log FORKED or was rewritten: the tree of {size} entries does not contain the tree of {was} entries seen before ({e})")
            })?;
            format!("consistent: {was} → {size} entries, root {root}")
        }
    };
    let tmp = state.with_extension("tmp");
    std::fs::write(&tmp, &new.note).and_then(|_| std::fs::rename(&tmp, state)).map_err(|e| format!("cannot save {} ({e})", state.display()))?;
    Ok(said)
}

/// The keys `base` publishes (`/audit/keys.json`), for a watch without keys of its own.
pub async fn published_keys(base: &str) -> Result<Vec<PublicKey>, String> {
    let client = reqwest::Client::builder().timeout(std::time::Duration::from_secs(30)).build().map_err(|e| e.to_string())?;
    let url = format!("{}/audit/keys.json", base.trim_end_matches('/'));
    let v: serde_json::Value = serde_json::from_slice(&get(&client, &url).await?).map_err(|e| format!("{url} is not a key list ({e})"))?;
    serde_json::from_value(v["keys"].clone()).map_err(|e| format!("{url} is not a key list ({e})"))
}
