//! The settings page (retention, jobs), the jobs panel of the dashboard, and the alert banner.

use leptos::prelude::*;
use leptos_meta::Title;

use super::api::*;
use super::{parse_retention_input, RetentionPreview};
use crate::jobs::JobView;
use crate::time::format_time;
use crate::ui::{describe, Outcome};

fn counts_text(counts: &[(String, u64)]) -> String {
    if counts.is_empty() {
        return "nothing to do".into();
    }
    counts.iter().map(|(name, n)| format!("{} {n}", name.replace('_', " "))).collect::<Vec<_>>().join(", ")
}

/// One job at a glance: its last run (when, trigger, outcome, what each step did), when the
/// next may start, and "Run now".
#[component]
pub fn JobCard(job: JobView, on_run: Callback<String>, running: RwSignal<Option<String>>) -> impl IntoView {
    let name = job.name.clone();
    let name_for_busy = job.name.clone();
    let next = match job.next_possible_at {
        Some(t) => format!("Next run may start after {}.", format_time(t)),
        None => "Next run may start now (with the next request, or the timer).".into(),
    };
    view! {
        <article class="job" data-testid=format!("job-{}", job.name)>
            <h3>{job.title.clone()}</h3>
            <p class="muted">{job.description.clone()}</p>
            <div data-testid=format!("job-status-{}", job.name)>
                {match job.last_run {
                    None => view! { <p>"Has not run yet."</p> }.into_any(),
                    Some(run) => view! {
                        <p class:bad={run.outcome == "failed"}>
                            "Last run: " <strong><crate::time::LocalTime at={run.started_at}/></strong> ", "
                            {crate::jobs::trigger_label(&run.trigger)} " — " {crate::jobs::outcome_label(&run.outcome)} "."
                        </p>
                        <ul class="steps">
                            {run.steps.into_iter().map(|s| {
                                let text = match s.status.as_str() {
                                    "failed" => "failed (see the server log)".to_string(),
                                    "skipped" => "not reached (budget spent; next run)".to_string(),
                                    _ => format!("{}{}", counts_text(&s.counts), if s.more { " (more left for the next run)" } else { "" }),
                                };
                                view! { <li class:bad={s.status == "failed"}>{s.label.clone()} ": " {text}</li> }
                            }).collect_view()}
                        </ul>
                    }.into_any(),
                }}
                <p class="muted">{next}</p>
            </div>
            <button type="button" class="secondary small" data-testid=format!("run-job-{}", job.name)
                on:click=move |_| on_run.run(name.clone())
                disabled=move || running.get().is_some()>
                {move || if running.get().as_deref() == Some(name_for_busy.as_str()) { "Running…" } else { "Run now" }}
            </button>
        </article>
    }
}

/// Every job of the registry, with "Run now" (dashboard and settings page).
#[component]
pub fn JobsPanel() -> impl IntoView {
    let version = RwSignal::new(0u32);
    let job_ran = crate::live::live_version(&[crate::live::Topic::Job]);
    let jobs = Resource::new(move || (version.get(), job_ran()), |_| list_jobs());
    let running = RwSignal::new(None::<String>);
    let message = RwSignal::new(None::<Result<String, String>>);
    let on_run = Callback::new(move |name: String| {
        running.set(Some(name.clone()));
        leptos::task::spawn_local(async move {
            match run_job_now(name).await {
                Ok(r) => {
                    let text = if r.ran {
                        format!("{} ran now. Its results are below.", r.job.title)
                    } else {
                        match r.job.next_possible_at {
                            Some(t) => format!(
                                "{} ran less than its interval ago, so it did not start again. The next run may start after {}.",
                                r.job.title,
                                format_time(t)
                            ),
                            None => format!("{} is running right now; its results will appear here.", r.job.title),
                        }
                    };
                    message.set(Some(Ok(text)));
                    version.update(|n| *n += 1);
                }
                Err(e) => message.set(Some(Err(describe(&e)))),
            }
            running.set(None);
        });
    });
    view! {
        <Outcome message testid="jobs-message"/>
        <div class="jobs" data-testid="jobs">
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || jobs.get().map(|r| match r {
                    Ok(list) => list.into_iter().map(|job| view! { <JobCard job on_run running/> }).collect_view().into_any(),
                    Err(e) => view! { <p class="notice error">{describe(&e)}</p> }.into_any(),
                })}
            </Transition>
        </div>
    }
}

/// Open alerts, on every admin page, until resolved (automatically or here).
#[component]
pub fn AlertBanner() -> impl IntoView {
    let version = RwSignal::new(0u32);
    let alerts = Resource::new(move || version.get(), |_| list_alerts());
    let resolve = move |id: i64| {
        leptos::task::spawn_local(async move {
            let _ = resolve_alert(id).await;
            version.update(|n| *n += 1);
        });
    };
    view! {
        <Transition fallback=|| ()>
            {move || alerts.get().and_then(Result::ok).filter(|a| !a.is_empty()).map(|list| view! {
                <section class="alerts" role="alert" aria-label="Alerts" data-testid="alerts">
                    {list.into_iter().map(|a| {
                        let id = a.id;
                        let testid = format!("alert-{}", a.kind);
                        view! {
                            <div class="notice error alert" data-testid=testid>
                                <p><strong>{a.message}</strong></p>
                                <p class="muted">"Since " <crate::time::LocalTime at={a.raised_at}/>
                                    {if a.times > 1 { format!(", raised {} times, last at {}", a.times, format_time(a.last_raised_at)) } else { String::new() }}
                                    " · " <code>{a.kind}</code>
                                </p>
                                <button type="button" class="secondary small" on:click=move |_| resolve(id)>"Mark resolved"</button>
                            </div>
                        }
                    }).collect_view()}
                </section>
            })}
        </Transition>
    }
}

#[component]
pub fn SettingsPage() -> impl IntoView {
    let typed = RwSignal::new(String::new());
    let saved = RwSignal::new(0u32);
    let current = Resource::new(move || saved.get(), |_| preview_retention(None));
    let preview = RwSignal::new(None::<Result<RetentionPreview, String>>);
    let message = RwSignal::new(None::<Result<String, String>>);

    // Fill the field with the stored value once it arrives.
    Effect::new(move |_| {
        if let Some(Ok(p)) = current.get() {
            if typed.get_untracked().is_empty() {
                typed.set(p.current_days.to_string());
            }
        }
    });

    let local_error = move || {
        let t = typed.get();
        if t.is_empty() {
            None
        } else {
            parse_retention_input(&t).err()
        }
    };

    // The dry run follows what is typed (only valid values are sent).
    Effect::new(move |_| {
        let t = typed.get();
        let Ok(days) = parse_retention_input(&t) else {
            preview.set(None);
            return;
        };
        leptos::task::spawn_local(async move {
            let r = preview_retention(Some(days as i64)).await.map_err(|e| describe(&e));
            if typed.get_untracked().trim() == days.to_string() {
                preview.set(Some(r));
            }
        });
    });

    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let Ok(days) = parse_retention_input(&typed.get_untracked()) else { return };
        leptos::task::spawn_local(async move {
            match save_retention(days as i64).await {
                Ok(d) => {
                    message.set(Some(Ok(format!("Saved: inquiries are kept for {d} days."))));
                    saved.update(|n| *n += 1);
                }
                Err(e) => message.set(Some(Err(describe(&e)))),
            }
        });
    };

    view! {
        <Title text="Settings — Ebb admin"/>
        <h1>"Settings"</h1>
        <Outcome message testid="settings-message"/>
        <section class="card" aria-labelledby="retention-title">
            <h2 id="retention-title">"How long inquiries are kept"</h2>
            <form class="inline" on:submit=save>
                <label for="retention-days">"Keep inquiries for (days)"</label>
                <input id="retention-days" type="number" min="1" max="3650" step="1" inputmode="numeric" required
                    aria-describedby="retention-effect retention-error" aria-invalid=move || local_error().is_some().to_string()
                    prop:value=typed on:input=move |ev| typed.set(event_target_value(&ev))/>
                <button type="submit" class="primary" disabled=move || parse_retention_input(&typed.get()).is_err()>"Save"</button>
            </form>
            <p id="retention-error" class="field-error" aria-live="polite">{local_error}</p>
            <p id="retention-effect" data-testid="retention-effect" aria-live="polite">
                {move || match preview.get() {
                    Some(Ok(p)) => format!(
                        "Inquiries older than {} days are deleted; {} would be deleted now.",
                        p.days, p.would_delete
                    ),
                    Some(Err(e)) => e,
                    None => String::new(),
                }}
            </p>
        </section>
        <section class="card" aria-labelledby="cleanup-title">
            <h2 id="cleanup-title">"Cleanup jobs"</h2>
            <p>"Old data is deleted automatically: after requests, by a timer, or from the command line — each job at most once per its interval, on one instance at a time."</p>
            <JobsPanel/>
        </section>
    }
}
