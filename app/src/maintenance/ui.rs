//! The settings page (retention, cleanup) and the maintenance glance on the dashboard.

use leptos::prelude::*;
use leptos_meta::Title;

use super::api::*;
use super::{parse_retention_input, MaintenanceStatus, RetentionPreview};
use crate::time::format_time;
use crate::ui::{describe, Outcome};

fn trigger_label(trigger: &str) -> &'static str {
    match trigger {
        "contact" => "after a contact form submission",
        "signin" => "after a sign-in attempt",
        "admin_inbox" => "when an admin opened the inbox",
        "admin" => "by an admin (Run cleanup now)",
        "ticker" => "by the periodic timer",
        "cli" => "from the command line",
        _ => "by another trigger",
    }
}

fn step_label(step: &str) -> &'static str {
    match step {
        "inquiries" => "old inquiries",
        "rate_limit_counters" => "ended rate-limit windows",
        "maintenance_runs" => "old maintenance records",
        "passkey_challenges" => "abandoned passkey challenges",
        "sessions" => "expired sessions",
        "admin_invites" => "expired invites",
        _ => "other",
    }
}

/// When the last cleanup ran, what it deleted, and when the next may start.
#[component]
pub fn MaintenanceSummary(status: MaintenanceStatus) -> impl IntoView {
    let next = match status.next_possible_at {
        Some(t) => format!("The next cleanup may start after {}.", format_time(t)),
        None => "The next cleanup may start now (with the next request, or within the timer's interval).".into(),
    };
    view! {
        <div class="maintenance" data-testid="maintenance-status">
            {match status.last_run {
                None => view! { <p>"Cleanup has not run yet."</p> }.into_any(),
                Some(run) => view! {
                    <p>
                        {if run.ok { "Last cleanup: " } else { "Last cleanup (with errors): " }}
                        <strong>{format_time(run.started_at)}</strong> ", " {trigger_label(&run.trigger)} "."
                    </p>
                    <ul class="steps">
                        {run.steps.into_iter().map(|s| view! {
                            <li class:bad=s.error.is_some()>
                                {step_label(&s.step)} ": "
                                {match s.error { Some(_) => "failed (see the server log)".to_string(), None => format!("{} deleted", s.deleted) }}
                            </li>
                        }).collect_view()}
                    </ul>
                }.into_any(),
            }}
            <p class="muted">{next}</p>
        </div>
    }
}

#[component]
pub fn SettingsPage() -> impl IntoView {
    let typed = RwSignal::new(String::new());
    let saved = RwSignal::new(0u32);
    let current = Resource::new(move || saved.get(), |_| preview_retention(None));
    let status = Resource::new(move || saved.get(), |_| get_maintenance_status());
    let preview = RwSignal::new(None::<Result<RetentionPreview, String>>);
    let message = RwSignal::new(None::<Result<String, String>>);
    let running = RwSignal::new(false);

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
        if t.is_empty() { None } else { parse_retention_input(&t).err() }
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

    let run_now = move |_| {
        running.set(true);
        leptos::task::spawn_local(async move {
            match run_cleanup_now().await {
                Ok(s) => {
                    let text = if s.ran_now == Some(true) {
                        "Cleanup ran now. Its results are below.".to_string()
                    } else {
                        match s.next_possible_at {
                            Some(t) => format!("A cleanup ran less than an hour ago, so this one did not start. The next may start after {}.", format_time(t)),
                            None => "Another cleanup is running right now; its results will appear below.".to_string(),
                        }
                    };
                    message.set(Some(Ok(text)));
                    saved.update(|n| *n += 1);
                }
                Err(e) => message.set(Some(Err(describe(&e)))),
            }
            running.set(false);
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
            <h2 id="cleanup-title">"Cleanup"</h2>
            <p>"Old data is deleted automatically, at most once an hour: after contact submissions, sign-ins, when the inbox is opened, and by a timer."</p>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || status.get().map(|r| match r {
                    Ok(s) => view! { <MaintenanceSummary status=s/> }.into_any(),
                    Err(e) => view! { <p class="notice error">{describe(&e)}</p> }.into_any(),
                })}
            </Transition>
            <button type="button" class="secondary" data-testid="run-cleanup" on:click=run_now disabled=move || running.get()>
                {move || if running.get() { "Running…" } else { "Run cleanup now" }}
            </button>
        </section>
    }
}
