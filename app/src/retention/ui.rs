//! The admin's retention page (report, download, holds) and the visitor's page of promises.

use leptos::prelude::*;
use leptos_meta::{Meta, Title};

use super::api::{get_public_promises, get_retention_report};
use super::{KindReport, RetentionReport};
use common::i18n::{self, num, t, texts, tf, Lang, Text, T};
use common::retention::kind_label;
use common::time::format_time;
use common::ui::{describe, Card, Loaded, UiT};

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
    let promise = kind.terms.map_or_else(|| kind.promise.clone(), |p| p.text(i18n::lang()));
    let job = match (&kind.job_title, &kind.last_run) {
        (Some(title), Some(run)) => {
            let did = run.step.as_ref().map_or_else(|| run.did.clone(), |d| d.text(i18n::lang()));
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
        <Loaded value=move || report.get() describe=describe ok=move |r| {
                let (class, text) = summary(&r);
                let now = r.generated_at;
                view! {
                    <p class=class role="status" data-testid="retention-summary">{text}</p>
                    <div class="table-scroll">
                        <table class="list retention" data-testid="retention">
                            <caption class="retention-note">{t(RetentionT::ReadAt)} <common::time::LocalTime at={now}/></caption>
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
            }/>
        <p class="inline tight">
            <a class="button small" href="/admin/retention/report.json" download data-testid="retention-download">{t(RetentionT::Download)}</a>
            <button type="button" class="secondary small" on:click=move |_| reload.update(|n| *n += 1)>{t(RetentionT::ReadAgain)}</button>
        </p>
        <p class="retention-note">{t(RetentionT::DownloadNote)} <code>"ebb retention report --json"</code> {t(RetentionT::DownloadNoteEnd)}</p>
        <Card id="holds-title" title=t(RetentionT::LegalHolds)>
            <p class="retention-note">{t(RetentionT::HoldsNote)}</p>
            <holds::ui::HoldsList on_change=move |_| reload.update(|n| *n += 1)/>
        </Card>
    }
}

/// The dashboard's card: past promise and holds at a glance.
#[component]
pub fn RetentionCard() -> impl IntoView {
    let changed = common::live::live_version(&[common::live::Topic::Job, common::live::Topic::Share, common::live::Topic::Inquiry]);
    let report = Resource::new(changed, |_| get_retention_report());
    view! {
        <Card id="dash-retention" title=t(RetentionT::Title)>
            <Loaded value=move || report.get() describe=describe ok=move |r| {
                    let (class, text) = summary(&r);
                    view! {
                        <p class=class data-testid="dashboard-retention">{text}</p>
                        <dl class="counts">
                            <div><dt>{t(RetentionT::PastPromiseLabel)}</dt><dd data-testid="dashboard-past-promise">{num(r.past_promise())}</dd></div>
                            <div><dt>{t(RetentionT::LegalHolds)}</dt><dd data-testid="dashboard-holds">{num(r.holds)}</dd></div>
                        </dl>
                    }.into_any()
                }/>
            <a href="/admin/retention">{t(RetentionT::OpenReport)}</a>
        </Card>
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
    use super::super::Did;
    use common::i18n::Lang;

    #[test]
    fn what_a_step_did_is_written_in_each_language() {
        for did in
            [Did::Skipped, Did::Stopped, Did::NotReached, Did::Ran { counts: vec![("checked".into(), 3), ("reread".into(), 1)], failed: false, more: false }]
        {
            assert_ne!(did.text(Lang::Ja), did.text(Lang::En), "{did:?}");
        }
        assert!(Did::Stopped.text(Lang::En).contains("earlier check stopped the run"));
        assert_eq!(Did::Ran { counts: vec![("deleted".into(), 3)], failed: true, more: false }.text(Lang::En), "deleted 3 (failed)");
    }
}
