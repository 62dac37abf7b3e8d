//! The admin's retention page (report, download, holds) and the visitor's page of promises.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use super::api::{get_public_promises, get_retention_report};
use super::{KindReport, RetentionReport};
use crate::i18n::{self, fill, num, t, texts, tf, Lang, Text, T};
use crate::time::format_time;
use crate::ui::{describe, UiT};

fn count_cell(n: i64, testid: &'static str) -> impl IntoView {
    view! { <td class="num" data-testid=testid>{num(n)}</td> }
}

/// A count that may be the planner's estimate of a large table ("≈ 5,000,000").
fn total_cell(n: i64, estimated: bool) -> impl IntoView {
    let text = if estimated { format!("≈ {}", num(n)) } else { num(n) };
    view! { <td class="num" data-testid="items" data-estimated=estimated.then_some("true")>{text}</td> }
}

/// An age for people in the page's language: "3 days", "5 hours", "12 minutes", "under a
/// minute" (the words of `super::age_words`, which the CLI's report uses).
fn age(secs: i64) -> String {
    match secs.max(0) {
        s if s >= 2 * 86_400 => i18n::days(s / 86_400),
        s if s >= 2 * 3_600 => i18n::hours(s / 3_600),
        s if s >= 60 => i18n::minutes(s / 60),
        _ => t(RetentionT::UnderAMinute).into(),
    }
}

/// A kind's promise, from the settings in force. The report writes it in English (the JSON, the
/// CLI and alerts read that text, which stays stable); this page writes it in its language from
/// the figures of that English text ([`Promise::read`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Promise {
    Inquiries { days: i64 },
    ShareFiles { grace_mins: i64 },
    Sessions { idle_hours: i64, absolute_days: i64 },
    PasskeyChallenges,
    Invites,
    RateLimitWindows,
    AuditEvents { promise_months: i64, detach_months: i64 },
    ArchivedMonths,
    ExportFiles { days: i64 },
    ExportRequests { days: i64 },
    RunRecords { days: i64 },
}

impl Promise {
    /// The promise in `lang`.
    pub(crate) fn text(self, lang: Lang) -> String {
        use RetentionT as R;
        let unit = |n: i64, one: R, many: R| if n == 1 { one.get(lang).to_string() } else { fill(many.get(lang), &[("n", &n)]) };
        match self {
            Promise::Inquiries { days } => fill(R::PromiseInquiries.get(lang), &[("days", &unit(days, R::UnitDay, R::UnitDays))]),
            Promise::ShareFiles { grace_mins } => fill(R::PromiseShareFiles.get(lang), &[("grace", &unit(grace_mins, R::UnitMinute, R::UnitMinutes))]),
            Promise::Sessions { idle_hours, absolute_days } => fill(
                R::PromiseSessions.get(lang),
                &[("idle", &unit(idle_hours, R::UnitHour, R::UnitHours)), ("absolute", &unit(absolute_days, R::UnitDay, R::UnitDays))],
            ),
            Promise::PasskeyChallenges => R::PromiseChallenges.get(lang).into(),
            Promise::Invites => R::PromiseInvites.get(lang).into(),
            Promise::RateLimitWindows => R::PromiseRateLimits.get(lang).into(),
            Promise::AuditEvents { promise_months, detach_months } => {
                fill(R::PromiseAuditEvents.get(lang), &[("promise", &promise_months), ("detach", &detach_months)])
            }
            Promise::ArchivedMonths => R::PromiseArchivedMonths.get(lang).into(),
            Promise::ExportFiles { days } => fill(R::PromiseExportFiles.get(lang), &[("days", &days)]),
            Promise::ExportRequests { days } => fill(R::PromiseExportRequests.get(lang), &[("days", &days)]),
            Promise::RunRecords { days } => fill(R::PromiseRunRecords.get(lang), &[("days", &days)]),
        }
    }

    /// The promise of the kind `kind` (its stable id) whose English text is `english`: its
    /// figures are read back from the text, and only a promise that gives the very same English
    /// text again is taken (else the page shows the report's words).
    pub(crate) fn read(kind: &str, english: &str) -> Option<Promise> {
        let n: Vec<i64> = english.split(|c: char| !c.is_ascii_digit()).filter_map(|s| s.parse().ok()).collect();
        let promise = match (kind, n.as_slice()) {
            ("inquiries", &[days]) => Promise::Inquiries { days },
            ("share_files", &[grace_mins]) => Promise::ShareFiles { grace_mins },
            ("sessions", &[idle_hours, absolute_days]) => Promise::Sessions { idle_hours, absolute_days },
            ("passkey_challenges", []) => Promise::PasskeyChallenges,
            ("invites", []) => Promise::Invites,
            ("rate_limit_windows", []) => Promise::RateLimitWindows,
            ("audit_events", &[promise_months, detach_months]) => Promise::AuditEvents { promise_months, detach_months },
            ("archived_months", []) => Promise::ArchivedMonths,
            ("export_files", &[days]) => Promise::ExportFiles { days },
            ("export_requests", &[days]) => Promise::ExportRequests { days },
            ("run_records", &[days]) => Promise::RunRecords { days },
            _ => return None,
        };
        (promise.text(Lang::En) == english).then_some(promise)
    }
}

/// A kind's label by its stable id (the report's `kind`).
fn kind_label(kind: &str) -> Option<RetentionT> {
    use RetentionT as R;
    Some(match kind {
        "inquiries" => R::KindInquiries,
        "share_files" => R::KindShareFiles,
        "sessions" => R::KindSessions,
        "passkey_challenges" => R::KindPasskeyChallenges,
        "invites" => R::KindInvites,
        "rate_limit_windows" => R::KindRateLimitWindows,
        "audit_events" => R::KindAuditEvents,
        "archived_months" => R::KindArchivedMonths,
        "export_files" => R::KindExportFiles,
        "export_requests" => R::KindExportRequests,
        "run_records" => R::KindRunRecords,
        _ => return None,
    })
}

/// What a job's step did, as the report says it (report.rs `step_did`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Did {
    /// The step ran: its counts (names with spaces, `requests deleted`), and how it ended.
    Ran { counts: Vec<(String, u64)>, failed: bool, more: bool },
    /// The run's budget ended before this step.
    Skipped,
    /// An earlier step's failed check stopped the run before this step (a person must act).
    Stopped,
    /// The run did not reach this step.
    NotReached,
}

impl Did {
    /// In `lang`: "deleted 3, batches 1", "done (failed)", "did not reach this step"…
    pub(crate) fn text(&self, lang: Lang) -> String {
        use RetentionT as R;
        match self {
            Did::Skipped => R::DidSkipped.get(lang).into(),
            Did::Stopped => R::DidStopped.get(lang).into(),
            Did::NotReached => R::DidNotReached.get(lang).into(),
            Did::Ran { counts, failed, more } => {
                let counts = if counts.is_empty() {
                    R::DidDone.get(lang).to_string()
                } else {
                    let count = |name: &str, n: u64| {
                        let name = COUNT_NAMES.iter().find(|&&k| k.get(Lang::En) == name).map_or(name, |&k| k.get(lang));
                        fill(R::DidCount.get(lang), &[("name", &name), ("n", &n)])
                    };
                    counts.iter().map(|(name, n)| count(name.as_str(), *n)).collect::<Vec<_>>().join(R::ListSeparator.get(lang))
                };
                if *failed {
                    fill(R::DidFailed.get(lang), &[("counts", &counts)])
                } else if *more {
                    fill(R::DidMore.get(lang), &[("counts", &counts)])
                } else {
                    counts
                }
            }
        }
    }

    /// The report's English text read back; only a reading that gives the very same text again
    /// is taken (else the page shows the report's words).
    fn read(english: &str) -> Option<Did> {
        use RetentionT as R;
        let en = |k: R| k.get(Lang::En);
        let did = if english == en(R::DidSkipped) {
            Did::Skipped
        } else if english == en(R::DidStopped) {
            Did::Stopped
        } else if english == en(R::DidNotReached) {
            Did::NotReached
        } else {
            let suffix = |k: R| english.strip_suffix(en(k).trim_start_matches("{counts}"));
            let (counts, failed, more) = match (suffix(R::DidFailed), suffix(R::DidMore)) {
                (Some(c), _) => (c, true, false),
                (None, Some(c)) => (c, false, true),
                (None, None) => (english, false, false),
            };
            let counts = if counts == en(R::DidDone) {
                Vec::new()
            } else {
                counts
                    .split(en(R::ListSeparator))
                    .map(|c| c.rsplit_once(' ').and_then(|(name, n)| Some((name.to_string(), n.parse::<u64>().ok()?))))
                    .collect::<Option<Vec<_>>>()?
            };
            Did::Ran { counts, failed, more }
        };
        (did.text(Lang::En) == english).then_some(did)
    }
}

/// The counts of the steps the report names (the others keep their English name).
const COUNT_NAMES: [RetentionT; 10] = [
    RetentionT::CountDeleted,
    RetentionT::CountBatches,
    RetentionT::CountPurged,
    RetentionT::CountFailed,
    RetentionT::CountDropped,
    RetentionT::CountLockedLeft,
    RetentionT::CountChecked,
    RetentionT::CountReread,
    RetentionT::CountRequestsDeleted,
    RetentionT::CountStuckFailed,
];

/// A job's title in the page's language (the registry's English title, which the report gives,
/// for a job this page does not know).
fn job_title(title: &str) -> String {
    use RetentionT as R;
    [R::JobPrune, R::JobShareGc, R::JobAuditArchive, R::JobAuditExports]
        .into_iter()
        .find(|&k| k.get(Lang::En) == title)
        .map_or_else(|| title.to_string(), |k| t(k).to_string())
}

#[component]
fn KindRow(kind: KindReport, now: time::OffsetDateTime) -> impl IntoView {
    let oldest = kind.oldest_at.map(|at| age((now - at).whole_seconds())).unwrap_or_else(|| "—".into());
    // The report's texts are English; the page's language from the kind's id and figures.
    let label = kind_label(&kind.kind).filter(|&k| k.get(Lang::En) == kind.label).map_or_else(|| kind.label.clone(), |k| t(k).to_string());
    let promise = Promise::read(&kind.kind, &kind.promise).map_or_else(|| kind.promise.clone(), |p| p.text(i18n::lang()));
    let job = match (&kind.job_title, &kind.last_run) {
        (Some(title), Some(run)) => {
            let did = Did::read(&run.did).map_or_else(|| run.did.clone(), |d| d.text(i18n::lang()));
            tf(RetentionT::LastRan, &[("title", &job_title(title)), ("time", &format_time(run.started_at)), ("did", &did)])
        }
        (Some(title), None) => tf(RetentionT::NotRunYet, &[("title", &job_title(title))]),
        _ => "—".into(),
    };
    let class = if kind.overdue > 0 { "past" } else { "" };
    view! {
        <tr class=class data-testid="retention-row" data-kind=kind.kind.clone()>
            <th scope="row">{label}</th>
            <td>{promise}</td>
            {total_cell(kind.count, kind.count_estimated)}
            <td class="num nowrap">{oldest}</td>
            {count_cell(kind.past_promise, "past")}
            {count_cell(kind.held, "held")}
            <td class="muted">{job}</td>
        </tr>
    }
}

fn items(n: i64) -> String {
    if n == 1 {
        t(RetentionT::ItemsOne).into()
    } else {
        tf(RetentionT::ItemsMany, &[("n", &num(n))])
    }
}

/// The summary line: all on time, or how much is late.
fn summary(r: &RetentionReport) -> (&'static str, String) {
    let past = r.past_promise();
    let held = r.held();
    let holds = match (held, r.holds) {
        (0, _) => String::new(),
        (n, 1) => tf(RetentionT::HeldOneHold, &[("items", &items(n))]),
        (n, h) => tf(RetentionT::HeldHolds, &[("items", &items(n)), ("h", &num(h))]),
    };
    if r.overdue() > 0 {
        ("notice error", tf(RetentionT::Overdue, &[("items", &items(r.overdue())), ("holds", &holds)]))
    } else if past > 0 {
        ("notice", tf(RetentionT::PastPromise, &[("items", &items(past)), ("holds", &holds)]))
    } else {
        ("notice success", tf(RetentionT::AllWithin, &[("holds", &holds)]))
    }
}

/// `/admin/retention`.
#[component]
pub fn RetentionPage() -> impl IntoView {
    let reload = RwSignal::new(0u32);
    let report = Resource::new(move || reload.get(), |_| get_retention_report());
    view! {
        <Title text=format!("{}{}", t(RetentionT::Title), t(UiT::AdminTitleSuffix))/>
        <h1>{t(RetentionT::Title)}</h1>
        <p class="lead">{t(RetentionT::Lead)}</p>
        <Transition fallback=|| view! { <p>{t(T::Loading)}</p> }>
            {move || report.get().map(|r| match r {
                Err(e) => view! { <p class="notice error">{describe(&e)}</p> }.into_any(),
                Ok(r) => {
                    let (class, text) = summary(&r);
                    let now = r.generated_at;
                    view! {
                        <p class=class role="status" data-testid="retention-summary">{text}</p>
                        <div class="table-scroll">
                            <table class="list retention" data-testid="retention">
                                <caption class="retention-note">{t(RetentionT::ReadAt)} <crate::time::LocalTime at={now}/></caption>
                                <thead><tr>
                                    <th scope="col">{t(RetentionT::ColData)}</th><th scope="col">{t(RetentionT::ColPromise)}</th>
                                    <th scope="col" class="num">{t(RetentionT::ColItems)}</th><th scope="col" class="num">{t(RetentionT::ColOldest)}</th>
                                    <th scope="col" class="num">{t(RetentionT::PastPromiseLabel)}</th><th scope="col" class="num">{t(RetentionT::ColOnHold)}</th>
                                    <th scope="col">{t(RetentionT::ColRemovedBy)}</th>
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
            <a class="button small" href="/admin/retention/report.json" download data-testid="retention-download">{t(RetentionT::Download)}</a>
            <button type="button" class="secondary small" on:click=move |_| reload.update(|n| *n += 1)>{t(RetentionT::ReadAgain)}</button>
        </p>
        <p class="retention-note">{t(RetentionT::DownloadNote)} <code>"ebb retention report --json"</code> {t(RetentionT::DownloadNoteEnd)}</p>
        <section class="card" aria-labelledby="holds-title">
            <h2 id="holds-title">{t(RetentionT::LegalHolds)}</h2>
            <p class="retention-note">{t(RetentionT::HoldsNote)}</p>
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
            <h2 id="dash-retention">{t(RetentionT::Title)}</h2>
            <Transition fallback=|| view! { <p>{t(T::Loading)}</p> }>
                {move || report.get().map(|r| match r {
                    Ok(r) => {
                        let (class, text) = summary(&r);
                        view! {
                            <p class=class data-testid="dashboard-retention">{text}</p>
                            <dl class="counts">
                                <div><dt>{t(RetentionT::PastPromiseLabel)}</dt><dd data-testid="dashboard-past-promise">{num(r.past_promise())}</dd></div>
                                <div><dt>{t(RetentionT::LegalHolds)}</dt><dd data-testid="dashboard-holds">{num(r.holds)}</dd></div>
                            </dl>
                        }.into_any()
                    }
                    Err(e) => view! { <p class="notice error">{describe(&e)}</p> }.into_any(),
                })}
            </Transition>
            <a href="/admin/retention">{t(RetentionT::OpenReport)}</a>
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

texts! {
    pub(crate) enum RetentionT {
    Title { en: "Retention", ja: "保管期間" }
    Lead { en: "Every kind of data Ebb keeps, its promise, and proof that it is kept: figures read from the live data just now.", ja: "Ebb が保管するデータの種類ごとに、約束した保管期間と、それが守られている証拠を示します。数値は、いま現在のデータから読み取ったものです。" }
    ReadAt { en: "Read at ", ja: "読み取り日時: " }
    ColData { en: "Data", ja: "データ" }
    ColPromise { en: "Promise", ja: "約束した保管期間" }
    ColItems { en: "Items", ja: "件数" }
    ColOldest { en: "Oldest", ja: "最も古いもの" }
    PastPromiseLabel { en: "Past promise", ja: "期間超過" }
    ColOnHold { en: "On hold", ja: "法的保全中" }
    ColRemovedBy { en: "Removed by", ja: "削除するジョブ" }
    LastRan { en: "{title}, last ran {time}: {did}", ja: "{title}（最終実行 {time}）: {did}" }
    NotRunYet { en: "{title}: has not run yet", ja: "{title}: まだ実行されていません" }
    UnderAMinute { en: "under a minute", ja: "1 分未満" }

    // The summary line: "{items}" is ItemsOne or ItemsMany; "{holds}" is empty or HeldOneHold / HeldHolds
    ItemsOne { en: "1 item is", ja: "1 件が" }
    ItemsMany { en: "{n} items are", ja: "{n} 件が" }
    HeldOneHold { en: " {items} kept on legal hold (1 hold).", ja: "{items}法的保全により保管されています（保全 1 件）。" }
    HeldHolds { en: " {items} kept on legal hold ({h} holds).", ja: "{items}法的保全により保管されています（保全 {h} 件）。" }
    Overdue { en: "{items} past the promise by more than one run of their job (an alert is raised).{holds}", ja: "{items}約束した保管期間を、削除ジョブの実行間隔 1 回分以上超えています（アラートが発生しています）。{holds}" }
    PastPromise { en: "{items} past the promise and will go with the next run of their job.{holds}", ja: "{items}約束した保管期間を過ぎており、次回の削除ジョブの実行で削除されます。{holds}" }
    AllWithin { en: "Every item is within its promise.{holds}", ja: "すべてのデータが約束した保管期間内です。{holds}" }

    Download { en: "Download the report (JSON)", ja: "レポートをダウンロード（JSON）" }
    ReadAgain { en: "Read again", ja: "もう一度読み取る" }
    DownloadNote { en: "A download is recorded in the audit log. Operators get the same report with ", ja: "ダウンロードは監査ログに記録されます。運用担当者は次のコマンドで同じレポートを取得できます: " }
    DownloadNoteEnd { en: ".", ja: "。" }
    LegalHolds { en: "Legal holds", ja: "法的保全" }
    HoldsNote { en: "A held item is kept past its promise until the hold is lifted. Place holds from an inquiry (Inbox) or an active share (Shares).", ja: "法的保全の対象は、保全が解除されるまで、約束した保管期間を過ぎても保管されます。保全は、お問い合わせ（受信箱）または有効な共有ファイル（共有ファイル）から設定します。" }
    OpenReport { en: "Open the retention report", ja: "保管期間レポートを開く" }

    // The report's kinds of data (report.rs writes the English for the JSON and the CLI; the
    // page looks them up by the kind's id)
    KindInquiries { en: "Inquiries", ja: "お問い合わせ" }
    KindShareFiles { en: "Shared files", ja: "共有ファイル" }
    KindSessions { en: "Admin sessions", ja: "管理者のセッション" }
    KindPasskeyChallenges { en: "Passkey challenges", ja: "パスキーのチャレンジ" }
    KindInvites { en: "Admin invites", ja: "管理者の招待" }
    KindRateLimitWindows { en: "Rate-limit windows", ja: "レート制限の集計期間" }
    KindAuditEvents { en: "Audit events in the database", ja: "データベース内の監査ログ" }
    KindArchivedMonths { en: "Archived audit months", ja: "アーカイブ済みの監査ログ（月単位）" }
    KindExportFiles { en: "Audit export files", ja: "監査ログのエクスポートファイル" }
    KindExportRequests { en: "Audit export requests", ja: "監査ログのエクスポート依頼" }
    KindRunRecords { en: "Job run records", ja: "ジョブの実行記録" }

    // Their promises (`Promise`); {days}, {grace}, {idle} and {absolute} are Unit… texts
    UnitDay { en: "1 day", ja: "1 日" }
    UnitDays { en: "{n} days", ja: "{n} 日" }
    UnitHour { en: "1 hour", ja: "1 時間" }
    UnitHours { en: "{n} hours", ja: "{n} 時間" }
    UnitMinute { en: "1 minute", ja: "1 分" }
    UnitMinutes { en: "{n} minutes", ja: "{n} 分" }
    PromiseInquiries { en: "Deleted {days} after they arrive (retention setting).", ja: "受信から {days}後に削除されます（保管期間の設定）。" }
    PromiseShareFiles { en: "Deleted {grace} after the one download, or when the link expires unused.", ja: "1 回限りのダウンロードから {grace}後、またはリンクが未使用のまま期限切れになった時点で削除されます。" }
    PromiseSessions { en: "Ended after {idle} unused, and {absolute} after sign-in at the latest.", ja: "{idle}使われないと終了し、遅くともサインインから {absolute}後には終了します。" }
    PromiseChallenges { en: "Deleted when used; abandoned ones when they expire (minutes).", ja: "使用時に削除されます。使われなかったものは期限切れ時（数分後）に削除されます。" }
    PromiseInvites { en: "Unused invites are deleted when they expire; used ones are kept as the record of who joined.", ja: "未使用の招待は期限切れ時に削除されます。使用済みの招待は、誰が参加したかの記録として保管されます。" }
    PromiseRateLimits { en: "Deleted a day after their window starts (they hold keyed hashes of addresses, never addresses).", ja: "集計期間の開始から 1 日後に削除されます（保存されるのはアドレスの鍵付きハッシュのみで、アドレスそのものは保存されません）。" }
    PromiseAuditEvents { en: "Queryable for {promise} months; a month is detached after {detach} months, archived, verified, then removed from the database.", ja: "{promise} か月間検索できます。各月は {detach} か月後に切り離され、アーカイブと確認を経てデータベースから削除されます。" }
    PromiseArchivedMonths { en: "Kept in archive storage; each object's size and checksum are checked daily.", ja: "アーカイブ用ストレージに保管されます。各オブジェクトのサイズとチェックサムは毎日確認されます。" }
    PromiseExportFiles { en: "Deleted {days} days after they are written.", ja: "作成から {days} 日後に削除されます。" }
    PromiseExportRequests { en: "Deleted {days} days after they are made.", ja: "依頼から {days} 日後に削除されます。" }
    PromiseRunRecords { en: "Deleted {days} days after the run.", ja: "実行から {days} 日後に削除されます。" }

    // The jobs that remove them (the registry's English titles) and what their step did (`Did`)
    JobPrune { en: "Prune", ja: "定期削除" }
    JobShareGc { en: "Share GC", ja: "共有ファイルの GC" }
    JobAuditArchive { en: "Audit archive", ja: "監査ログのアーカイブ" }
    JobAuditExports { en: "Audit exports", ja: "監査ログのエクスポート" }
    DidDone { en: "done", ja: "完了" }
    DidCount { en: "{name} {n}", ja: "{name}: {n}" }
    ListSeparator { en: ", ", ja: "、" }
    DidFailed { en: "{counts} (failed)", ja: "{counts}（失敗）" }
    DidMore { en: "{counts} (more next run)", ja: "{counts}（残りは次回の実行で処理）" }
    DidSkipped { en: "skipped (the run's budget ended first)", ja: "スキップ（このステップの前に実行の上限に達しました）" }
    DidStopped { en: "not run: an earlier check stopped the run (see the alert)", ja: "未実行：前のチェックが実行を停止しました（アラートを確認してください）" }
    DidNotReached { en: "did not reach this step", ja: "このステップまで進みませんでした" }
    CountDeleted { en: "deleted", ja: "削除" }
    CountBatches { en: "batches", ja: "バッチ" }
    CountPurged { en: "purged", ja: "ファイル削除" }
    CountFailed { en: "failed", ja: "失敗" }
    CountDropped { en: "dropped", ja: "データベースから削除" }
    CountLockedLeft { en: "locked left", ja: "ロック中のため未処理" }
    CountChecked { en: "checked", ja: "確認" }
    CountReread { en: "reread", ja: "再読み込み" }
    CountRequestsDeleted { en: "requests deleted", ja: "削除した依頼" }
    CountStuckFailed { en: "stuck failed", ja: "停止により失敗扱い" }
}
}

#[cfg(test)]
mod did_tests {
    use super::*;

    #[test]
    fn what_a_step_did_reads_back_from_the_reports_english_and_shows_in_japanese() {
        for did in
            [Did::Skipped, Did::Stopped, Did::NotReached, Did::Ran { counts: vec![("checked".into(), 3), ("reread".into(), 1)], failed: false, more: false }]
        {
            assert_eq!(Did::read(&did.text(Lang::En)), Some(did.clone()), "{did:?}");
            assert_ne!(did.text(Lang::Ja), did.text(Lang::En), "{did:?}");
        }
        assert!(Did::Stopped.text(Lang::En).contains("earlier check stopped the run"));
    }
}
