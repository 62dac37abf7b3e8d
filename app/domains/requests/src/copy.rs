//! The copy of a person's data: one streamed JSON document (a cover sheet, then every kind's
//! items) and one CSV per kind. Items are read one page at a time (keyset, [`PAGE`] items) and
//! written as they are read, so memory stays flat for any number of items; a page query that
//! fails after the first bytes ends the body with an error (the download fails, it never looks
//! complete).

use std::sync::Arc;

use bytes::Bytes;
use common::i18n::{fill, Lang, Text};
use common::personal::{kind_label, Found};
use futures::Stream;
use kernel::personal::{rfc3339, Address, After, Item, PersonalCtx, PersonalData};
use kernel::state::AppState;
use serde_json::{json, Value};

use super::texts::CopyT;
use super::RequestView;

/// Items per page query: a few megabytes at most in memory, and few enough queries that a
/// copy of 100,000 items costs what reading them costs.
pub const PAGE: i64 = 5000;

/// What the cover sheet says.
pub struct Cover {
    pub value: Value,
    pub text: String,
}

/// The cover sheet: what Ebb is, the request, and for each kind its promise, what was found and
/// when Ebb deletes it anyway; what Ebb keeps that cannot be searched by address, and why.
pub async fn cover(state: &AppState, request: &RequestView, who: &Address, found: &[Found], lang: Lang) -> Result<Cover, sqlx::Error> {
    let ctx = PersonalCtx { state };
    let now = kernel::jobs::claim::db_now(&state.pool).await?;
    let mut kinds = Vec::new();
    let mut lines = vec![
        CopyT::Title.get(lang).to_string(),
        String::new(),
        CopyT::About.get(lang).to_string(),
        String::new(),
        fill(
            CopyT::RequestLine.get(lang),
            &[("id", &request.id), ("kind", &request.kind.as_str()), ("received", &request.received_on), ("due", &request.due_on)],
        ),
        fill(CopyT::AddressLine.get(lang), &[("email", &who.email)]),
        fill(CopyT::GeneratedLine.get(lang), &[("at", &rfc3339(now))]),
        String::new(),
    ];
    for (source, f) in super::personal::sources(state).iter().zip(found) {
        let promise = source.promise(&ctx).await?;
        let label = kind_label(&f.kind, lang);
        lines.push(fill(CopyT::KindLine.get(lang), &[("label", &label), ("n", &f.count), ("promise", &promise.text(lang))]));
        for why in &f.kept_why {
            lines.push(fill(CopyT::KeptLine.get(lang), &[("why", why)]));
        }
        kinds.push(json!({
            "kind": f.kind, "label": label, "promise": promise.text(lang), "terms": promise,
            "count": f.count, "kept": f.kept, "kept_why": f.kept_why,
            "oldest": f.oldest.map(rfc3339), "newest": f.newest.map(rfc3339),
        }));
    }
    let not_searchable: Vec<&str> =
        [CopyT::NotSearchableClients, CopyT::NotSearchableAudit, CopyT::NotSearchableFiles, CopyT::NotSearchableMail].iter().map(|k| k.get(lang)).collect();
    lines.push(String::new());
    lines.push(CopyT::NotSearchableHeading.get(lang).to_string());
    lines.extend(not_searchable.iter().map(|l| format!("- {l}")));
    let value = json!({
        "title": CopyT::Title.get(lang),
        "about": CopyT::About.get(lang),
        "request": { "id": request.id, "kind": request.kind, "received_on": request.received_on.to_string(), "due_on": request.due_on.to_string() },
        "address": who.email,
        "generated_at": rfc3339(now),
        "kinds": kinds,
        "not_searchable": not_searchable,
        "each_item": CopyT::EachItem.get(lang),
    });
    Ok(Cover { value, text: lines.join("\n") + "\n" })
}

/// One item as a JSON object: its id, when it was made, its fields by the kind's column names,
/// why an erasure leaves it, and when Ebb deletes it anyway.
fn item_json(source: &dyn PersonalData, item: &Item) -> Value {
    let mut map = serde_json::Map::new();
    map.insert("id".into(), item.id.clone().into());
    map.insert("created_at".into(), rfc3339(item.at).into());
    for (name, value) in source.columns().iter().zip(&item.fields) {
        map.insert((*name).into(), value.clone().into());
    }
    map.insert("kept_because".into(), item.kept.clone().map_or(Value::Null, Value::from));
    map.insert("deleted_by".into(), item.deleted_by.map(rfc3339).map_or(Value::Null, Value::from));
    Value::Object(map)
}

enum JsonState {
    Start,
    Kind { index: usize, after: Option<After>, wrote: bool },
    End,
    Done,
}

/// The whole copy as one JSON document, streamed: `{"cover": …, "data": {"inquiries": [ … ], …}}`.
pub fn json_stream(state: AppState, who: Address, request: i64, cover: Value) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let sources = super::personal::sources(&state);
    let shared = Arc::new((state, who, cover));
    futures::stream::unfold(JsonState::Start, move |st| {
        let shared = shared.clone();
        let sources = sources.clone();
        async move {
            let (state, who, cover) = &*shared;
            match st {
                JsonState::Done => None,
                JsonState::Start => {
                    Some((Ok(Bytes::from(format!("{{\"cover\":{cover},\"data\":{{"))), JsonState::Kind { index: 0, after: None, wrote: false }))
                }
                JsonState::End => Some((Ok(Bytes::from_static(b"}}\n")), JsonState::Done)),
                JsonState::Kind { index, after, wrote } => {
                    let Some(source) = sources.0.get(index) else {
                        return Some((Ok(Bytes::new()), JsonState::End));
                    };
                    let ctx = PersonalCtx { state };
                    let page = match source.page(&ctx, who, request, after.clone(), PAGE).await {
                        Ok(page) => page,
                        Err(e) => {
                            tracing::warn!(error = %e, kind = source.kind(), "data request copy failed");
                            return Some((Err(std::io::Error::other("copy query failed")), JsonState::Done));
                        }
                    };
                    let mut out = String::new();
                    if after.is_none() {
                        out.push_str(&format!("{}{}:[", if index > 0 { "," } else { "" }, Value::from(source.kind())));
                    }
                    let mut wrote = wrote;
                    for item in &page {
                        if wrote {
                            out.push(',');
                        }
                        out.push_str(&item_json(source.as_ref(), item).to_string());
                        wrote = true;
                    }
                    let next = if page.len() as i64 == PAGE {
                        JsonState::Kind { index, after: page.last().map(Item::after), wrote }
                    } else {
                        out.push(']');
                        JsonState::Kind { index: index + 1, after: None, wrote: false }
                    };
                    Some((Ok(Bytes::from(out)), next))
                }
            }
        }
    })
}

fn csv_row(w: &mut csv::Writer<Vec<u8>>, cells: &[String]) -> csv::Result<()> {
    w.write_record(cells.iter().map(|c| kernel::csv_export::neutralise_formula(c).into_owned()))
}

fn csv_bytes(rows: &[Vec<String>]) -> Result<Bytes, std::io::Error> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::with_capacity(64 * 1024));
    for r in rows {
        csv_row(&mut w, r).map_err(std::io::Error::other)?;
    }
    w.into_inner().map(Bytes::from).map_err(|e| std::io::Error::other(e.to_string()))
}

/// The CSV header of a kind: id, created_at, its columns, kept_because, deleted_by.
pub fn csv_header(source: &dyn PersonalData) -> Vec<String> {
    let mut header = vec!["id".to_string(), "created_at".to_string()];
    header.extend(source.columns().iter().map(|c| c.to_string()));
    header.extend(["kept_because".to_string(), "deleted_by".to_string()]);
    header
}

fn csv_cells(item: &Item) -> Vec<String> {
    let mut cells = vec![item.id.clone(), rfc3339(item.at)];
    cells.extend(item.fields.iter().cloned());
    cells.push(item.kept.clone().unwrap_or_default());
    cells.push(item.deleted_by.map(rfc3339).unwrap_or_default());
    cells
}

/// One kind's items as CSV (RFC 4180, formulas neutralised), streamed page by page.
pub fn csv_stream(state: AppState, who: Address, request: i64, source: Arc<dyn PersonalData>) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let shared = Arc::new((state, who, source));
    futures::stream::unfold(Some(None::<After>), move |st| {
        let shared = shared.clone();
        async move {
            let after = st?;
            let (state, who, source) = &*shared;
            let header = after.is_none().then(|| csv_header(source.as_ref()));
            let ctx = PersonalCtx { state };
            let page = match source.page(&ctx, who, request, after, PAGE).await {
                Ok(page) => page,
                Err(e) => {
                    tracing::warn!(error = %e, kind = source.kind(), "data request copy failed");
                    return Some((Err(std::io::Error::other("copy query failed")), None));
                }
            };
            let mut rows: Vec<Vec<String>> = header.into_iter().collect();
            rows.extend(page.iter().map(csv_cells));
            let next = (page.len() as i64 == PAGE).then(|| page.last().map(Item::after));
            Some((csv_bytes(&rows), next))
        }
    })
}
