//! The audit log viewer (`/admin/audit`) and the dashboard's upkeep card.

use leptos::prelude::*;
use leptos_meta::Title;

use super::api::*;
use super::{AuditFilter, AuditKind, AuditRow};
use crate::error::AppError;
use crate::time::format_time;
use crate::ui::describe;

/// The filter form's fields, as typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Fields {
    kind: String,
    admin: String,
    subject: String,
    from: String,
    to: String,
}

impl Fields {
    fn filter(&self) -> Result<AuditFilter, std::collections::BTreeMap<String, String>> {
        AuditFilter::parse(&self.kind, &self.admin, &self.subject, &self.from, &self.to)
    }
}

fn field_error(err: &Option<AppError>, field: &'static str) -> Option<String> {
    match err {
        Some(AppError::Invalid(fields)) => fields.get(field).cloned(),
        _ => None,
    }
}

#[component]
pub fn AuditPage() -> impl IntoView {
    let form = RwSignal::new(Fields::default());
    let applied = RwSignal::new(Fields::default());
    let first_page = Resource::new(move || applied.get(), |f| async move { audit_events(f.kind, f.admin, f.subject, f.from, f.to, None).await });
    let admins = Resource::new(|| (), |_| audit_admins());
    let more = RwSignal::new(Vec::<AuditRow>::new());
    let next = RwSignal::new(None::<String>);
    let error = RwSignal::new(None::<AppError>);

    Effect::new(move |_| match first_page.get() {
        Some(Ok(page)) => {
            more.set(Vec::new());
            next.set(page.next.clone());
            error.set(None);
        }
        Some(Err(e)) => error.set(Some(e)),
        None => {}
    });

    let load_more = move |_| {
        let (f, cursor) = (applied.get_untracked(), next.get_untracked());
        leptos::task::spawn_local(async move {
            match audit_events(f.kind, f.admin, f.subject, f.from, f.to, cursor).await {
                Ok(page) => {
                    more.update(|m| m.extend(page.rows));
                    next.set(page.next);
                }
                Err(e) => error.set(Some(e)),
            }
        });
    };

    let rows = move || {
        let mut all = first_page.get().and_then(Result::ok).map(|p| p.rows).unwrap_or_default();
        all.extend(more.get());
        all
    };
    let export_href = move || match applied.get().filter() {
        Ok(f) => format!("/admin/audit/export.csv?{}", f.query()),
        Err(_) => "/admin/audit/export.csv".to_string(),
    };
    let set = move |update: fn(&mut Fields, String)| move |ev: leptos::ev::Event| form.update(|f| update(f, event_target_value(&ev)));
    let err_of = move |field: &'static str| move || field_error(&error.get(), field);

    view! {
        <Title text="Audit log — Ebb admin"/>
        <h1>"Audit log"</h1>
        <p class="muted">"Who did what, and when, over the last 24 months. Older months are archived."</p>
        <form class="filters" data-testid="audit-filters" on:submit=move |ev: leptos::ev::SubmitEvent| { ev.prevent_default(); applied.set(form.get_untracked()); }>
            <div class="field">
                <label for="audit-kind">"What"</label>
                <select id="audit-kind" on:change=set(|f, v| f.kind = v) aria-describedby="audit-kind-error">
                    <option value="">"Everything"</option>
                    {AuditKind::ALL.iter().map(|k| view! { <option value=k.as_str()>{k.label()}</option> }).collect_view()}
                </select>
                <p class="field-error" id="audit-kind-error" aria-live="polite">{err_of("kind")}</p>
            </div>
            <div class="field">
                <label for="audit-admin">"Who"</label>
                <select id="audit-admin" on:change=set(|f, v| f.admin = v) aria-describedby="audit-admin-error">
                    <option value="">"Anyone"</option>
                    <Transition fallback=|| ()>
                        {move || admins.get().and_then(Result::ok).map(|list| list.into_iter().map(|a| view! { <option value=a.id.to_string()>{a.name}</option> }).collect_view())}
                    </Transition>
                </select>
                <p class="field-error" id="audit-admin-error" aria-live="polite">{err_of("admin")}</p>
            </div>
            <div class="field">
                <label for="audit-subject">"Subject id"</label>
                <input id="audit-subject" type="text" maxlength="200" placeholder="e.g. a share or inquiry id" prop:value=move || form.get().subject on:input=set(|f, v| f.subject = v) aria-describedby="audit-subject-error"/>
                <p class="field-error" id="audit-subject-error" aria-live="polite">{err_of("subject")}</p>
            </div>
            <div class="field">
                <label for="audit-from">"From"</label>
                <input id="audit-from" type="date" prop:value=move || form.get().from on:input=set(|f, v| f.from = v) aria-describedby="audit-from-error"/>
                <p class="field-error" id="audit-from-error" aria-live="polite">{err_of("from")}</p>
            </div>
            <div class="field">
                <label for="audit-to">"To"</label>
                <input id="audit-to" type="date" prop:value=move || form.get().to on:input=set(|f, v| f.to = v) aria-describedby="audit-to-error"/>
                <p class="field-error" id="audit-to-error" aria-live="polite">{err_of("to")}</p>
            </div>
            <div class="field actions">
                <button type="submit">"Filter"</button>
                <a class="button secondary" data-testid="audit-export" href=export_href download>"Export CSV"</a>
            </div>
        </form>
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || first_page.get().map(|r| match r {
                Err(AppError::Invalid(_)) => view! { <p class="notice error" role="alert">"Check the filters above."</p> }.into_any(),
                Err(e) => view! { <p class="notice error" role="alert">{describe(&e)}</p> }.into_any(),
                Ok(_) => view! {
                    <table class="list audit" data-testid="audit-log">
                        <thead><tr><th>"When (UTC)"</th><th>"What happened"</th><th><span class="sr-only">"Details"</span></th></tr></thead>
                        <tbody>
                            <For each=rows key=|r| r.id let:row>
                                <EventRow row/>
                            </For>
                        </tbody>
                    </table>
                    <Show when=move || rows().is_empty()>
                        <p class="empty">"No event matches these filters."</p>
                    </Show>
                    <Show when=move || next.get().is_some()>
                        <button type="button" class="secondary" on:click=load_more>"Show older"</button>
                    </Show>
                }.into_any(),
            })}
        </Transition>
    }
}

#[component]
fn EventRow(row: AuditRow) -> impl IntoView {
    let sentence = row.sentence();
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "—".into());
    view! {
        <tr data-testid="audit-row" data-kind=row.kind.clone()>
            <td class="nowrap">{format_time(row.occurred_at)}</td>
            <td>{sentence}</td>
            <td>
                <details>
                    <summary>"Details"</summary>
                    <dl class="facts">
                        <dt>"Event"</dt><dd>{row.id}</dd>
                        <dt>"Kind"</dt><dd><code>{row.kind.clone()}</code></dd>
                        <dt>"Admin"</dt><dd>{dash(&row.admin_name)} {row.admin_id.map(|a| format!(" ({a})"))}</dd>
                        <dt>"Subject"</dt><dd>{dash(&row.subject_type)} " " {dash(&row.subject_id)}</dd>
                        <dt>"Detail"</dt><dd>{dash(&row.detail)}</dd>
                        <dt>"Client (hashed)"</dt><dd><code>{dash(&row.client_hash)}</code></dd>
                    </dl>
                </details>
            </td>
        </tr>
    }
}

/// The dashboard's view of the audit upkeep: partitions ahead, months waiting for the archive,
/// rows in the default partition.
#[component]
pub fn UpkeepCard() -> impl IntoView {
    let state = Resource::new(|| (), |_| audit_upkeep_state());
    view! {
        <section class="card" aria-labelledby="upkeep-title" data-testid="audit-upkeep">
            <h2 id="upkeep-title">"Audit log"</h2>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || state.get().map(|r| match r {
                    Err(e) => view! { <p class="notice error">{describe(&e)}</p> }.into_any(),
                    Ok(s) => {
                        let ahead_ok = s.partitions_ahead >= s.partitions_wanted;
                        view! {
                            <dl class="counts">
                                <div class=if ahead_ok { "" } else { "bad" }><dt>"Months ready ahead"</dt><dd data-testid="partitions-ahead">{s.partitions_ahead} " of " {s.partitions_wanted}</dd></div>
                                <div><dt>"Months waiting for the archive"</dt><dd data-testid="months-pending">{s.months_pending}</dd></div>
                                <div class=if s.default_rows == 0 { "" } else { "bad" }><dt>"Events outside a month"</dt><dd data-testid="default-rows">{s.default_rows}</dd></div>
                            </dl>
                            <p class="muted"><a href="/admin/audit">"Open the audit log"</a></p>
                        }.into_any()
                    }
                })}
            </Transition>
        </section>
    }
}
