//! The admin's retention page (report, download, holds) and the visitor's page of promises.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use super::api::{get_public_promises, get_retention_report};
use super::{age_words, KindReport, RetentionReport};
use crate::i18n::{self, t, tf, T};
use crate::time::format_time;
use crate::ui::describe;

fn count_cell(n: i64, testid: &'static str) -> impl IntoView {
    view! { <td class="num" data-testid=testid>{n}</td> }
}

#[component]
fn KindRow(kind: KindReport, now: time::OffsetDateTime) -> impl IntoView {
    let oldest = kind.oldest_at.map(|t| age_words((now - t).whole_seconds())).unwrap_or_else(|| "—".into());
    let job = match (&kind.job_title, &kind.last_run) {
        (Some(title), Some(run)) => format!("{title}, last ran {}: {}", format_time(run.started_at), run.did),
        (Some(title), None) => format!("{title}: has not run yet"),
        _ => "—".into(),
    };
    let class = if kind.overdue > 0 { "past" } else { "" };
    view! {
        <tr class=class data-testid="retention-row" data-kind=kind.kind.clone()>
            <th scope="row">{kind.label.clone()}</th>
            <td>{kind.promise.clone()}</td>
            {count_cell(kind.count, "items")}
            <td class="num nowrap">{oldest}</td>
            {count_cell(kind.past_promise, "past")}
            {count_cell(kind.held, "held")}
            <td class="muted">{job}</td>
        </tr>
    }
}

fn items(n: i64) -> String {
    if n == 1 {
        "1 item is".into()
    } else {
        format!("{n} items are")
    }
}

/// The summary line: all on time, or how much is late.
fn summary(r: &RetentionReport) -> (&'static str, String) {
    let past = r.past_promise();
    let held = r.held();
    let holds = match (held, r.holds) {
        (0, _) => String::new(),
        (n, 1) => format!(" {} kept on legal hold (1 hold).", items(n)),
        (n, h) => format!(" {} kept on legal hold ({h} holds).", items(n)),
    };
    if r.overdue() > 0 {
        ("notice error", format!("{} past the promise by more than one run of their job (an alert is raised).{holds}", items(r.overdue())))
    } else if past > 0 {
        ("notice", format!("{} past the promise and will go with the next run of their job.{holds}", items(past)))
    } else {
        ("notice success", format!("Every item is within its promise.{holds}"))
    }
}

/// `/admin/retention`.
#[component]
pub fn RetentionPage() -> impl IntoView {
    let reload = RwSignal::new(0u32);
    let report = Resource::new(move || reload.get(), |_| get_retention_report());
    view! {
        <Title text="Retention — Ebb admin"/>
        <h1>"Retention"</h1>
        <p class="lead">"Every kind of data Ebb keeps, its promise, and proof that it is kept: figures read from the live data just now."</p>
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || report.get().map(|r| match r {
                Err(e) => view! { <p class="notice error">{describe(&e)}</p> }.into_any(),
                Ok(r) => {
                    let (class, text) = summary(&r);
                    let now = r.generated_at;
                    view! {
                        <p class=class role="status" data-testid="retention-summary">{text}</p>
                        <div class="table-scroll">
                            <table class="list retention" data-testid="retention">
                                <caption class="retention-note">"Read at " <crate::time::LocalTime at={now}/></caption>
                                <thead><tr>
                                    <th scope="col">"Data"</th><th scope="col">"Promise"</th><th scope="col" class="num">"Items"</th>
                                    <th scope="col" class="num">"Oldest"</th><th scope="col" class="num">"Past promise"</th>
                                    <th scope="col" class="num">"On hold"</th><th scope="col">"Removed by"</th>
                                </tr></thead>
                                <tbody>
                                    {r.kinds.into_iter().map(|k| view! { <KindRow kind=k now/> }).collect_view()}
                                </tbody>
                            </table>
                        </div>
                    }.into_any()
                }
            })}
        </Transition>
        <p class="inline tight">
            <a class="button small" href="/admin/retention/report.json" download data-testid="retention-download">"Download the report (JSON)"</a>
            <button type="button" class="secondary small" on:click=move |_| reload.update(|n| *n += 1)>"Read again"</button>
        </p>
        <p class="retention-note">"A download is recorded in the audit log. Operators get the same report with " <code>"ebb retention report --json"</code> "."</p>
        <section class="card" aria-labelledby="holds-title">
            <h2 id="holds-title">"Legal holds"</h2>
            <p class="retention-note">"A held item is kept past its promise until the hold is lifted. Place holds from an inquiry (Inbox) or an active share (Shares)."</p>
            <crate::holds::ui::HoldsList on_change=move |_| reload.update(|n| *n += 1)/>
        </section>
    }
}

/// The dashboard's card: past promise and holds at a glance.
#[component]
pub fn RetentionCard() -> impl IntoView {
    let changed = crate::live::live_version(&[crate::live::Topic::Job, crate::live::Topic::Share, crate::live::Topic::Inquiry]);
    let report = Resource::new(changed, |_| get_retention_report());
    view! {
        <section class="card" aria-labelledby="dash-retention">
            <h2 id="dash-retention">"Retention"</h2>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || report.get().map(|r| match r {
                    Ok(r) => {
                        let (class, text) = summary(&r);
                        view! {
                            <p class=class data-testid="dashboard-retention">{text}</p>
                            <dl class="counts">
                                <div><dt>"Past promise"</dt><dd data-testid="dashboard-past-promise">{r.past_promise()}</dd></div>
                                <div><dt>"Legal holds"</dt><dd data-testid="dashboard-holds">{r.holds}</dd></div>
                            </dl>
                        }.into_any()
                    }
                    Err(e) => view! { <p class="notice error">{describe(&e)}</p> }.into_any(),
                })}
            </Transition>
            <a href="/admin/retention">"Open the retention report"</a>
        </section>
    }
}

/// `/retention`: what happens to a visitor's data, from the live settings.
#[component]
pub fn PublicRetentionPage() -> impl IntoView {
    let promises = Resource::new(|| (), |_| get_public_promises());
    view! {
        <Title text=format!("{}{}", t(T::RetentionPublicTitle), t(T::TitleSuffix))/>
        <Meta name="description" content=t(T::RetentionPublicDescription)/>
        <div class="page narrow">
            <h1>{t(T::RetentionPublicTitle)}</h1>
            <Suspense fallback=|| view! { <p>{t(T::Loading)}</p> }>
                {move || promises.get().map(|r| match r {
                    Err(e) => view! { <p class="notice error">{describe(&e)}</p> }.into_any(),
                    Ok(p) => view! {
                        <h2>{t(T::RetentionMessagesHeading)}</h2>
                        <p data-testid="promise-messages">{tf(T::RetentionMessages, &[("days", &i18n::days(p.retention_days as i64))])}</p>
                        <h2>{t(T::RetentionFilesHeading)}</h2>
                        <p data-testid="promise-files">
                            {tf(T::RetentionFiles, &[("grace", &i18n::minutes(p.delivery_grace_mins as i64)), ("longest", &i18n::hours(p.max_share_hours as i64))])}
                        </p>
                        <h2>{t(T::RetentionNothingLongerHeading)}</h2>
                        <p data-testid="promise-nothing-longer">{t(T::RetentionNothingLonger)}</p>
                        <p>{t(T::RetentionAdmins)}</p>
                    }.into_any(),
                })}
            </Suspense>
            <p><a href="/">{t(T::RetentionBack)}</a></p>
        </div>
    }
}
