//! The settings page (retention, jobs), the jobs panel of the dashboard, and the alert banner.

use leptos::prelude::*;
use leptos_meta::Title;

use super::api::*;
use super::texts::SettingsT;
use super::{parse_retention_input, RetentionPreview};
use common::i18n::{num, t, tf, Lang, Text};
use common::jobs::{JobView, RunNowView, RunState, StepStatus};
use common::time::format_time;
use common::ui::{describe, Card, Loaded, Outcome, UiT};

// What the jobs and alerts say comes from the server in English, which stays the stored, logged,
// exported and printed text (the run records, `maintenance_runs`, `alerts`, metrics, the CLI and
// JSON). The page shows it in its language by looking it up here by its stable name (job, step,
// count, trigger, outcome, alert kind). A key is used only while its English is the very text the
// server sent: an unknown name, or a text changed since this table was written, is shown as the
// server wrote it (English) rather than as a stale translation.

/// `key`'s text in `lang` when its English is `english`; else `english` as it is.
fn translated(lang: Lang, key: Option<SettingsT>, english: &str) -> String {
    match key {
        Some(k) if k.get(Lang::En) == english => k.get(lang).to_string(),
        _ => english.to_string(),
    }
}

/// The registry's jobs by stable name: title and description (their English is the registry's).
const JOBS: [(&str, SettingsT, SettingsT); 8] = [
    ("prune", SettingsT::JobPrune, SettingsT::JobPruneText),
    ("share_gc", SettingsT::JobShareGc, SettingsT::JobShareGcText),
    ("audit_upkeep", SettingsT::JobAuditUpkeep, SettingsT::JobAuditUpkeepText),
    ("audit_archive", SettingsT::JobAuditArchive, SettingsT::JobAuditArchiveText),
    ("audit_seal", SettingsT::JobAuditSeal, SettingsT::JobAuditSealText),
    ("audit_exports", SettingsT::JobAuditExports, SettingsT::JobAuditExportsText),
    ("notify", SettingsT::JobNotify, SettingsT::JobNotifyText),
    ("requests", SettingsT::JobRequests, SettingsT::JobRequestsText),
];

/// The jobs' steps by (job, step) name: their labels (step names repeat across jobs).
const STEP_LABELS: [(&str, &str, SettingsT); 34] = [
    ("prune", "inquiries", SettingsT::LabelOldInquiries),
    ("prune", "rate_limit_counters", SettingsT::LabelRateLimitWindows),
    ("prune", "maintenance_runs", SettingsT::LabelOldRunRecords),
    ("prune", "passkey_challenges", SettingsT::LabelPasskeyChallenges),
    ("prune", "sessions", SettingsT::LabelExpiredSessions),
    ("prune", "admin_invites", SettingsT::LabelExpiredInvites),
    ("prune", "suspected_spam", SettingsT::LabelOldSpam),
    ("prune", "spam_proofs_spent", SettingsT::LabelSpentProofs),
    ("prune", "purged_shares", SettingsT::LabelPurgedShares),
    ("prune", "ended_records", SettingsT::LabelEndedRecords),
    ("prune", "retention_check", SettingsT::LabelRetentionCheck),
    ("share_gc", "purge", SettingsT::LabelSharePurge),
    ("share_gc", "reconcile", SettingsT::LabelShareReconcile),
    ("share_gc", "abandoned_uploads", SettingsT::LabelShareUploads),
    ("share_gc", "file_requests", SettingsT::LabelShareRequests),
    ("audit_upkeep", "partitions", SettingsT::LabelUpkeepPartitions),
    ("audit_archive", "requests", SettingsT::LabelArchiveRequests),
    ("audit_archive", "partitions", SettingsT::LabelArchivePartitions),
    ("audit_archive", "objects", SettingsT::LabelArchiveObjects),
    ("audit_archive", "write", SettingsT::LabelArchiveWrite),
    ("audit_archive", "verify", SettingsT::LabelArchiveVerify),
    ("audit_archive", "drop", SettingsT::LabelArchiveDrop),
    ("audit_seal", "seal", SettingsT::LabelSealSeal),
    ("audit_seal", "digest", SettingsT::LabelSealDigest),
    ("audit_seal", "verify", SettingsT::LabelSealVerify),
    ("audit_exports", "run", SettingsT::LabelExportsRun),
    ("audit_exports", "stuck", SettingsT::LabelExportsStuck),
    ("audit_exports", "expired_files", SettingsT::LabelExportsExpired),
    ("notify", "send", SettingsT::LabelNotifySend),
    ("notify", "files", SettingsT::LabelNotifyFiles),
    ("notify", "forget", SettingsT::LabelNotifyForget),
    ("prune", "forget_requests", SettingsT::LabelForgetRequests),
    ("requests", "erase", SettingsT::LabelRequestsErase),
    ("requests", "deadlines", SettingsT::LabelRequestsDeadlines),
];

/// The steps' count names (`orphans_deleted`; their English is the name with spaces).
const COUNT_NAMES: [(&str, SettingsT); 37] = [
    ("deleted", SettingsT::CountDeleted),
    ("batches", SettingsT::CountBatches),
    ("past_promise", SettingsT::CountPastPromise),
    ("overdue", SettingsT::CountOverdue),
    ("hold_flags_cleared", SettingsT::CountHoldFlagsCleared),
    ("requests_deleted", SettingsT::CountRequestsDeleted),
    ("stuck_failed", SettingsT::CountStuckFailed),
    ("partitions_ahead", SettingsT::CountPartitionsAhead),
    ("default_rows", SettingsT::CountDefaultRows),
    ("checked", SettingsT::CountChecked),
    ("reread", SettingsT::CountReread),
    ("written", SettingsT::CountWritten),
    ("empty_left", SettingsT::CountEmptyLeft),
    ("verified", SettingsT::CountVerified),
    ("dropped", SettingsT::CountDropped),
    ("locked_left", SettingsT::CountLockedLeft),
    ("started", SettingsT::CountStarted),
    ("created", SettingsT::CountCreated),
    ("detached", SettingsT::CountDetached),
    ("left_alone", SettingsT::CountLeftAlone),
    ("purged", SettingsT::CountPurged),
    ("failed", SettingsT::CountFailed),
    ("files_checked", SettingsT::CountFilesChecked),
    ("orphans_deleted", SettingsT::CountOrphansDeleted),
    ("rows_checked", SettingsT::CountRowsChecked),
    ("files_missing", SettingsT::CountFilesMissing),
    ("removed", SettingsT::CountRemoved),
    ("sent", SettingsT::CountSent),
    ("off", SettingsT::CountOff),
    ("waiting", SettingsT::CountWaiting),
    ("sealed", SettingsT::CountSealed),
    ("refused", SettingsT::CountRefused),
    ("digests", SettingsT::CountDigests),
    ("erased", SettingsT::CountErased),
    ("requests_closed", SettingsT::CountRequestsClosed),
    ("raised", SettingsT::CountRaised),
    ("forgotten", SettingsT::CountForgotten),
];

/// The triggers (`maintenance_runs.trigger`) as `common::jobs::trigger_label` words them.
const TRIGGERS: [(&str, SettingsT); 8] = [
    ("contact", SettingsT::TriggerContact),
    ("signin", SettingsT::TriggerSignin),
    ("admin_inbox", SettingsT::TriggerAdminInbox),
    ("shares", SettingsT::TriggerShares),
    ("traffic", SettingsT::TriggerTraffic),
    ("admin", SettingsT::TriggerAdmin),
    ("ticker", SettingsT::TriggerTicker),
    ("cli", SettingsT::TriggerCli),
];

/// The outcomes (`maintenance_runs.outcome`) as `common::jobs::outcome_label` words them.
const OUTCOMES: [(RunState, SettingsT); 5] = [
    (RunState::Ok, SettingsT::OutcomeOk),
    (RunState::Failed, SettingsT::OutcomeFailed),
    (RunState::CutOff, SettingsT::OutcomeCutOff),
    (RunState::Running, SettingsT::OutcomeRunning),
    (RunState::Interrupted, SettingsT::OutcomeInterrupted),
];

/// Whether a job of the registry (its name, English title and description, and its steps'
/// `(name, label)`) has its Japanese here, with the registry's very English: the composition
/// root's test runs it over every job.
pub fn check_job_translated(name: &str, title: &str, description: &str, steps: &[(&str, &str)]) -> Result<(), String> {
    if job_title_in(Lang::En, name, title) != title || job_title_in(Lang::Ja, name, title) == title {
        return Err(format!("{name}: no Japanese title"));
    }
    // The retention report has only the English title.
    if job_title_in(Lang::Ja, "", title) != job_title_in(Lang::Ja, name, title) {
        return Err(format!("{name}: its title is not found by its English"));
    }
    let (.., texts) = JOBS.iter().find(|(n, ..)| *n == name).ok_or_else(|| format!("{name} has no texts"))?;
    if texts.get(Lang::En) != description {
        return Err(format!("{name}: the description differs from the registry's"));
    }
    for (step, label) in steps {
        let key = STEP_LABELS.iter().find(|(j, s, _)| *j == name && s == step).map(|(.., k)| k.get(Lang::En));
        if key != Some(*label) {
            return Err(format!("{name}.{step}: no label, or not the registry's"));
        }
    }
    Ok(())
}

fn job_title_in(lang: Lang, name: &str, english: &str) -> String {
    let key = JOBS.iter().find(|(n, ..)| *n == name).or_else(|| JOBS.iter().find(|(_, k, _)| k.get(Lang::En) == english)).map(|(_, k, _)| *k);
    translated(lang, key, english)
}

/// A job's title in the page's language, by its stable name (`prune`…). A caller that has only
/// the registry's English title (the retention report) passes an empty name: the title is then
/// found by its English. An unknown job keeps `english`.
pub(crate) fn job_title(name: &str, english: &str) -> String {
    job_title_in(common::i18n::lang(), name, english)
}

/// A job's description in the page's language, by its stable name; else `english`.
pub(crate) fn job_description(name: &str, english: &str) -> String {
    translated(common::i18n::lang(), JOBS.iter().find(|(n, ..)| *n == name).map(|(.., k)| *k), english)
}

/// A step's label in the page's language, by its job's and its own stable name; else `english`
/// (the registry's label, or the step's name for a step the registry no longer has).
pub(crate) fn step_label(job: &str, step: &str, english: &str) -> String {
    translated(common::i18n::lang(), STEP_LABELS.iter().find(|(j, s, _)| *j == job && *s == step).map(|(.., k)| *k), english)
}

/// A step's count name (`orphans_deleted`) in `lang` ("orphans deleted" in English).
fn count_name_in(lang: Lang, name: &str) -> String {
    translated(lang, COUNT_NAMES.iter().find(|(n, _)| *n == name).map(|(_, k)| *k), &name.replace('_', " "))
}

/// How a run was triggered, in the page's language (the CLI prints `common::jobs::trigger_label`).
fn trigger_text(trigger: &str) -> String {
    let key = TRIGGERS.iter().find(|(n, _)| *n == trigger).map_or(SettingsT::TriggerOther, |(_, k)| *k);
    translated(common::i18n::lang(), Some(key), common::jobs::trigger_label(trigger))
}

/// How a run ended, in the page's language (the CLI prints `common::jobs::outcome_label`).
fn outcome_text(outcome: RunState) -> String {
    let key = OUTCOMES.iter().find(|(n, _)| *n == outcome).map_or(SettingsT::OutcomeFailed, |(_, k)| *k);
    translated(common::i18n::lang(), Some(key), common::jobs::outcome_label(outcome))
}

fn counts_text(counts: &[(String, u64)]) -> String {
    if counts.is_empty() {
        return t(SettingsT::NothingToDo).into();
    }
    let lang = common::i18n::lang();
    counts
        .iter()
        .map(|(name, n)| format!("{} {}", count_name_in(lang, name), num(i64::try_from(*n).unwrap_or(i64::MAX))))
        .collect::<Vec<_>>()
        .join(SettingsT::Comma.get(lang))
}

/// An open alert's message in the page's language, written from its data; an alert raised
/// before messages were kept as data shows the English it was raised with.
pub(crate) fn alert_message(alert: &common::alerts::AlertView) -> String {
    let lang = common::i18n::lang();
    match &alert.params {
        Some(message) => message.text(lang, &|name, english| job_title_in(lang, name, english)),
        None => alert.message.clone(),
    }
}

/// One job at a glance: its last run (when, trigger, outcome, what each step did), when the
/// next may start, and "Run now".
#[component]
pub fn JobCard(job: JobView, on_run: Callback<String>, running: RwSignal<Option<String>>) -> impl IntoView {
    let name = job.name.clone();
    let name_for_busy = job.name.clone();
    let job_name = job.name.clone();
    let title = job_title(&job.name, &job.title);
    let description = job_description(&job.name, &job.description);
    let next = match job.next_possible_at {
        Some(at) => tf(SettingsT::NextAfter, &[("time", &format_time(at))]),
        None => t(SettingsT::NextNow).into(),
    };
    view! {
        <article class="job" data-testid=format!("job-{}", job.name)>
            <h3>{title}</h3>
            <p class="muted">{description}</p>
            <div data-testid=format!("job-status-{}", job.name)>
                {match job.last_run {
                    None => view! { <p>{t(SettingsT::NotRunYet)}</p> }.into_any(),
                    Some(run) => view! {
                        <p class:bad={run.outcome == RunState::Failed}>
                            {t(SettingsT::LastRun)} <strong><common::time::LocalTime at={run.started_at}/></strong> {t(SettingsT::Comma)}
                            {trigger_text(&run.trigger)} " — " {outcome_text(run.outcome)} {t(SettingsT::Period)}
                        </p>
                        <ul class="steps">
                            {run.steps.into_iter().map(|s| {
                                let text = match s.status {
                                    StepStatus::Failed => t(SettingsT::StepFailed).to_string(),
                                    StepStatus::Skipped => t(SettingsT::StepSkipped).to_string(),
                                    StepStatus::Stopped => t(SettingsT::StepStopped).to_string(),
                                    StepStatus::Running => format!("{} {}", counts_text(&s.counts), t(SettingsT::StepRunning)),
                                    StepStatus::CutOff => format!("{}{}", counts_text(&s.counts), t(SettingsT::StepCutOff)),
                                    StepStatus::Done => format!("{}{}", counts_text(&s.counts), if s.more { t(SettingsT::StepMoreLeft) } else { "" }),
                                };
                                let label = step_label(&job_name, &s.step, &s.label);
                                view! { <li class:bad={s.status == StepStatus::Failed}>{label} ": " {text}</li> }
                            }).collect_view()}
                        </ul>
                    }.into_any(),
                }}
                <p class="muted">{next}</p>
            </div>
            <button type="button" class="secondary small" data-testid=format!("run-job-{}", job.name)
                on:click=move |_| on_run.run(name.clone())
                disabled=move || running.get().is_some()>
                {move || if running.get().as_deref() == Some(name_for_busy.as_str()) { t(SettingsT::Running) } else { t(SettingsT::RunNow) }}
            </button>
        </article>
    }
}

/// What "Run now" did, for people: started, ran, not due yet, or busy elsewhere.
fn run_now_text(r: &RunNowView) -> String {
    // The job's title goes in last: its text is not read for placeholders.
    let title = job_title(&r.job.name, &r.job.title);
    if r.started {
        tf(SettingsT::StartedNow, &[("job", &title)])
    } else if r.ran {
        tf(SettingsT::RanNow, &[("job", &title)])
    } else {
        match r.job.next_possible_at {
            Some(at) => tf(SettingsT::NotDue, &[("time", &format_time(at)), ("job", &title)]),
            None => tf(SettingsT::Busy, &[("job", &title)]),
        }
    }
}

/// Every job of the registry, with "Run now" (dashboard and settings page).
#[component]
pub fn JobsPanel() -> impl IntoView {
    let version = RwSignal::new(0u32);
    let job_ran = common::live::live_version(&[common::live::Topic::Job]);
    let jobs = Resource::new(move || (version.get(), job_ran()), |_| list_jobs());
    let running = RwSignal::new(None::<String>);
    let message = RwSignal::new(None::<Result<String, String>>);
    // "Run now" goes through the server function's action; `running` names the job it runs.
    let run_now = ServerAction::<RunJobNow>::new();
    Effect::new(move |_| {
        let Some(result) = run_now.value().get() else { return };
        message.set(Some(result.map(|r| run_now_text(&r)).map_err(|e| describe(&e))));
        version.update(|n| *n += 1);
        running.set(None);
    });
    let on_run = Callback::new(move |name: String| {
        running.set(Some(name.clone()));
        run_now.dispatch(RunJobNow { job: name });
    });
    view! {
        <Outcome message testid="jobs-message"/>
        <div class="jobs" data-testid="jobs">
            <Loaded value=move || jobs.get() describe=describe ok=move |list| list.into_iter().map(|job| view! { <JobCard job on_run running/> }).collect_view().into_any()/>
        </div>
    }
}

/// Open alerts, on every admin page, until resolved (automatically or here).
#[component]
pub fn AlertBanner() -> impl IntoView {
    let version = RwSignal::new(0u32);
    let alerts = Resource::new(move || version.get(), |_| list_alerts());
    // Resolving goes through the server function's action; the banner is read again after it.
    let resolve_action = ServerAction::<ResolveAlert>::new();
    Effect::new(move |_| {
        if resolve_action.value().get().is_some() {
            version.update(|n| *n += 1);
        }
    });
    let resolve = move |id: i64| {
        resolve_action.dispatch(ResolveAlert { id: id.into() });
    };
    view! {
        <Transition fallback=|| ()>
            {move || alerts.get().and_then(Result::ok).filter(|a| !a.is_empty()).map(|list| view! {
                <section class="alerts" role="alert" aria-label=t(SettingsT::Alerts) data-testid="alerts">
                    {list.into_iter().map(|a| {
                        let id = a.id;
                        let testid = format!("alert-{}", a.kind);
                        let message = alert_message(&a);
                        view! {
                            <div class="notice error alert" data-testid=testid>
                                <p><strong>{message}</strong></p>
                                {(!a.details.is_empty()).then(|| view! {
                                    <details class="alert-details">
                                        <summary>{t(SettingsT::AlertDetails)}</summary>
                                        <pre data-testid="alert-details">{a.details.clone()}</pre>
                                    </details>
                                })}
                                <p class="muted">{t(SettingsT::Since)} <common::time::LocalTime at={a.raised_at}/>
                                    {if a.times > 1 { tf(SettingsT::RaisedTimes, &[("n", &num(a.times)), ("time", &format_time(a.last_raised_at))]) } else { String::new() }}
                                    " · " <code>{a.kind}</code>
                                </p>
                                <button type="button" class="secondary small" on:click=move |_| resolve(id)>{t(SettingsT::MarkResolved)}</button>
                            </div>
                        }
                    }).collect_view()}
                </section>
            })}
        </Transition>
    }
}

/// Asks for the dry run of the retention value typed (a valid one), and keeps the answer while
/// it is still what is typed.
fn preview_typed(typed: RwSignal<String>, preview: RwSignal<Option<Result<RetentionPreview, String>>>) {
    let raw = typed.get();
    let Ok(days) = parse_retention_input(&raw) else {
        preview.set(None);
        return;
    };
    // Scoped: an error is described in the page's language (its context).
    leptos::task::spawn_local_scoped(async move {
        let r = preview_retention(Some(days as i64)).await.map_err(|e| describe(&e));
        if typed.get_untracked().trim() == days.to_string() {
            preview.set(Some(r));
        }
    });
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

    // The check of `super` (shared with the server), with its words in the page's language.
    let local_error = move || {
        let raw = typed.get();
        if raw.is_empty() {
            None
        } else {
            parse_retention_input(&raw).err().map(|_| t(SettingsT::RetentionDaysInvalid).to_string())
        }
    };

    // The dry run follows what is typed (only valid values are sent).
    Effect::new(move |_| preview_typed(typed, preview));

    // Saving goes through the server function's action: its value says how it went.
    let save_action = ServerAction::<SaveRetention>::new();
    Effect::new(move |_| match save_action.value().get() {
        Some(Ok(d)) => {
            message.set(Some(Ok(tf(SettingsT::Saved, &[("n", &d)]))));
            saved.update(|n| *n += 1);
        }
        Some(Err(e)) => message.set(Some(Err(describe(&e)))),
        None => {}
    });
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        if let Ok(days) = parse_retention_input(&typed.get_untracked()) {
            save_action.dispatch(SaveRetention { days: i64::from(days) });
        }
    };

    view! {
        <Title text=format!("{}{}", t(SettingsT::Heading), t(UiT::AdminTitleSuffix))/>
        <h1>{t(SettingsT::Heading)}</h1>
        <Outcome message testid="settings-message"/>
        <Card id="retention-title" title=t(SettingsT::RetentionHeading)>
            <form class="inline" on:submit=save>
                <label for="retention-days">{t(SettingsT::KeepFor)}</label>
                <input id="retention-days" type="number" min="1" max="3650" step="1" inputmode="numeric" required
                    aria-describedby="retention-effect retention-error" aria-invalid=move || local_error().is_some().to_string()
                    prop:value=typed on:input=move |ev| typed.set(event_target_value(&ev))/>
                <button type="submit" class="primary" disabled=move || parse_retention_input(&typed.get()).is_err()>{t(SettingsT::Save)}</button>
            </form>
            <p id="retention-error" class="field-error" aria-live="polite">{local_error}</p>
            <p id="retention-effect" data-testid="retention-effect" aria-live="polite">
                {move || match preview.get() {
                    Some(Ok(p)) => tf(SettingsT::RetentionEffect, &[("days", &p.days), ("n", &num(p.would_delete))]),
                    Some(Err(e)) => e,
                    None => String::new(),
                }}
            </p>
        </Card>
        <Card id="cleanup-title" title=t(SettingsT::CleanupHeading)>
            <p>{t(SettingsT::CleanupText)}</p>
            <JobsPanel/>
        </Card>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggers_and_outcomes_keep_the_clis_english() {
        for (name, key) in TRIGGERS {
            assert_eq!(key.get(Lang::En), common::jobs::trigger_label(name));
        }
        assert_eq!(SettingsT::TriggerOther.get(Lang::En), common::jobs::trigger_label("some_new_trigger"));
        for (name, key) in OUTCOMES {
            assert_eq!(key.get(Lang::En), common::jobs::outcome_label(name));
        }
    }

    #[test]
    fn count_names_are_the_names_with_spaces_and_unknown_ones_stay() {
        for (name, key) in COUNT_NAMES {
            assert_eq!(key.get(Lang::En), name.replace('_', " "));
        }
        assert_eq!(count_name_in(Lang::Ja, "orphans_deleted"), "参照のないファイルの削除");
        assert_eq!(count_name_in(Lang::Ja, "some_new_count"), "some new count");
    }
}
