//! Email notifications about new inquiries (issue 15), against a real SMTP server: Python's
//! aiosmtpd (Debian's python3-aiosmtpd, installed by scripts/setup.sh), started here on a free
//! port and writing what it receives to a Maildir.

use std::path::{Path, PathBuf};
use std::time::Duration;

use app::jobs::{run_job, RunOutcome, Trigger};
use sqlx::PgPool;

use crate::helpers::*;

struct SmtpServer {
    child: std::process::Child,
    port: u16,
    maildir: PathBuf,
    _dir: tempfile::TempDir,
}

impl SmtpServer {
    fn start() -> SmtpServer {
        let dir = tempfile::tempdir().unwrap();
        let maildir = dir.path().join("mail");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let python = std::env::var("EBB_TEST_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".into());
        let child = std::process::Command::new(&python)
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}"), "-c", "aiosmtpd.handlers.Mailbox"])
            .arg(&maildir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{python} -m aiosmtpd could not start ({e}); run scripts/setup.sh (python3-aiosmtpd)"));
        // Owned from here: dropped (killed and reaped) whatever happens next.
        let server = SmtpServer { child, port, maildir, _dir: dir };
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("aiosmtpd did not listen on port {port}");
    }

    fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Every message received so far, raw, oldest first.
    fn messages(&self) -> Vec<String> {
        let mut files: Vec<_> = std::fs::read_dir(self.maildir.join("new")).map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect()).unwrap_or_default();
        files.sort_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok());
        files.iter().map(|p: &PathBuf| std::fs::read_to_string(p as &Path).unwrap()).collect()
    }

    /// Waits (up to 20 s) until `n` messages arrived.
    async fn wait_for(&self, n: usize) -> Vec<String> {
        for _ in 0..200 {
            let got = self.messages();
            if got.len() >= n {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("expected {n} message(s), got {}", self.messages().len());
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A header's value (first occurrence, case-insensitive name).
fn header<'a>(raw: &'a str, name: &str) -> &'a str {
    raw.lines()
        .take_while(|l| !l.is_empty())
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim()))
        .unwrap_or_else(|| panic!("no {name} header in:\n{raw}"))
}

async fn run_notify(app: &TestApp) -> app::jobs::RunRecord {
    let job = app.state.jobs().get(app::notify::JOB).unwrap();
    match run_job(&app.state, job, Trigger::Admin, true).await.unwrap() {
        RunOutcome::Ran(r) => r,
        other => panic!("notify did not run: {other:?}"),
    }
}

const PEOPLE: [(&str, &str, &str); 4] = [
    ("Ada Lovelace", "ada@example.org", "Secret plans for the analytical engine."),
    ("Grace Hopper", "grace@example.org", "About the compiler."),
    ("Alan Turing", "alan@example.org", "On computable numbers."),
    ("Edsger Dijkstra", "edsger@example.org", "Goto considered harmful."),
];

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn admins_get_one_email_per_digest_period_and_it_names_no_one_by_default(pool: PgPool) {
    let smtp = SmtpServer::start();
    let url = smtp.url();
    let app =
        spawn_app_with(pool.clone(), &["--smtp-url", &url, "--notify-to", "ops@example.com, boss@example.com", "--notify-digest-mins", "10"], |_| {}).await;

    // The first inquiry: sent after the response, by the job the submission nudged.
    let (name, email, message) = PEOPLE[0];
    assert_eq!(app.post_contact(&[("name", name), ("email", email), ("message", message)]).await.status(), 200);
    let mails = smtp.wait_for(1).await;
    let mail = &mails[0];
    let rcpt = header(mail, "X-RcptTo");
    assert!(rcpt.contains("ops@example.com") && rcpt.contains("boss@example.com"), "{rcpt}");
    assert_eq!(header(mail, "Subject"), "New inquiry on Ebb");
    assert!(header(mail, "From").contains("ebb@localhost"));
    assert!(mail.contains("You have 1 new inquiry."), "{mail}");
    assert!(mail.contains("http://localhost:3000/admin/inbox"));
    for secret in [name, email, message, "Lovelace", "example.org"] {
        assert!(!mail.contains(secret), "{secret:?} in a count-only notification:\n{mail}");
    }

    // Three more within the period: nothing yet (one digest per period)...
    for (name, email, message) in &PEOPLE[1..] {
        assert_eq!(app.post_contact(&[("name", name), ("email", email), ("message", message)]).await.status(), 200);
    }
    let run = run_notify(&app).await;
    assert_eq!(run.steps[0].counts, vec![("sent", 0), ("waiting", 1)]);
    assert_eq!(smtp.messages().len(), 1);
    // ...and once the period is over, one digest for all three.
    sqlx::query("update settings set value = (value::bigint - 11 * 60 * 1000)::text where key = 'notify_last_sent_at'").execute(&pool).await.unwrap();
    let run = run_notify(&app).await;
    assert_eq!(run.steps[0].counts, vec![("sent", 3)]);
    let mails = smtp.wait_for(2).await;
    assert_eq!(header(&mails[1], "Subject"), "3 new inquiries on Ebb");
    assert!(mails[1].contains("You have 3 new inquiries."));
    // Nothing is sent twice.
    sqlx::query("update settings set value = '0' where key = 'notify_last_sent_at'").execute(&pool).await.unwrap();
    assert_eq!(run_notify(&app).await.steps[0].counts, vec![("sent", 0)]);
    assert_eq!(smtp.messages().len(), 2);
    let notified: i64 = sqlx::query_scalar("select count(*) from inquiries where notified").fetch_one(&pool).await.unwrap();
    assert_eq!(notified, 4);
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_full_text_is_sent_only_when_chosen_and_as_plain_text(pool: PgPool) {
    let smtp = SmtpServer::start();
    let url = smtp.url();
    let app = spawn_app_with(pool.clone(), &["--smtp-url", &url, "--notify-to", "ops@example.com", "--notify-content", "full"], |_| {}).await;
    let message = "Hello <b>team</b>, please call me.";
    assert_eq!(app.post_contact(&[("name", "Ada <script>x</script>"), ("email", "ada@example.org"), ("message", message)]).await.status(), 200);
    let mail = &smtp.wait_for(1).await[0];
    assert!(header(mail, "Content-Type").starts_with("text/plain"), "{mail}");
    assert!(mail.contains("From: Ada <script>x</script> <ada@example.org>"), "{mail}");
    assert!(mail.contains(message), "{mail}");
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn notifications_can_be_written_in_japanese(pool: PgPool) {
    let smtp = SmtpServer::start();
    let url = smtp.url();
    let app =
        spawn_app_with(pool.clone(), &["--smtp-url", &url, "--notify-to", "ops@example.com", "--notify-content", "full", "--notify-lang", "ja"], |_| {}).await;
    let message = "明日の打ち合わせについて";
    assert_eq!(app.post_contact(&[("name", "山田 花子"), ("email", "hanako@example.jp"), ("message", message)]).await.status(), 200);
    let raw = smtp.wait_for(1).await.remove(0);
    let mail = mail_parser::MessageParser::default().parse(raw.as_bytes()).expect("a parsable message");
    assert_eq!(mail.subject(), Some("Ebb に新しいお問い合わせがあります"));
    let body = mail.body_text(0).expect("a text body");
    assert!(body.contains("新しいお問い合わせが 1 件あります。"), "{body}");
    assert!(body.contains("送信者: 山田 花子 <hanako@example.jp>"), "{body}");
    assert!(body.contains(message), "{body}");
    assert!(body.contains("受信箱で確認して返信してください: http://localhost:3000/admin/inbox"), "{body}");
    assert!(!body.contains("You have"), "{body}");
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn without_smtp_nothing_is_sent_and_a_dead_server_never_holds_up_the_form(pool: PgPool) {
    // Off by default: the job runs and says so.
    let app = spawn_app(pool.clone()).await;
    assert_eq!(app.post_contact(&[("name", "Ada"), ("email", "ada@example.org"), ("message", "Hello there.")]).await.status(), 200);
    assert_eq!(run_notify(&app).await.steps[0].counts, vec![("sent", 0), ("off", 1)]);
    app.shutdown().await;

    // An SMTP server that accepts connections and never answers: the form still answers at
    // once (the mail is the job's business), and the failed send keeps the inquiries pending.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("smtp://{}", silent.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((sock, _)) = silent.accept().await {
            open.push(sock);
        }
    });
    // A fresh folder for the new app: adopted on purpose (the first may have written digests).
    sqlx::query("delete from settings where key = 'storage_marker_id'").execute(&pool).await.unwrap();
    let app = spawn_app_with(pool.clone(), &["--smtp-url", &url, "--notify-to", "ops@example.com"], |_| {}).await;
    let answered =
        tokio::time::timeout(Duration::from_secs(10), app.post_contact(&[("name", "Grace"), ("email", "grace@example.org"), ("message", "Are you there?")]))
            .await
            .expect("the form answers while the SMTP server hangs");
    assert_eq!(answered.status(), 200);
    let pending: i64 = sqlx::query_scalar("select count(*) from inquiries where not notified").fetch_one(&pool).await.unwrap();
    assert_eq!(pending, 2);
    held.abort();
}

/// Opted in (`--notify-files true`): one email for a share downloaded completely and a file
/// received through a file request, sent once; names only with full content. Off by default.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn file_events_are_emailed_once_when_opted_in(pool: PgPool) {
    let smtp = SmtpServer::start();
    let url = smtp.url();
    let cookie = crate::shares::admin_cookie(&pool).await;
    let app =
        spawn_app_with(pool.clone(), &["--smtp-url", &url, "--notify-to", "ops@example.com", "--notify-files", "true", "--notify-content", "full"], |_| {})
            .await;
    let path = crate::shares::share_via_upload(&app, &cookie, "contract.pdf", crate::shares::body_of(10_000)).await;
    let res = app.client.post(app.url(&path)).send().await.unwrap();
    assert_eq!(res.bytes().await.unwrap().len(), 10_000);
    let res = call_form(&app, "/api/admin/file-requests/create", Some(&cookie), &[("expires_hours", "24"), ("max_mib", "1"), ("note", "")]).await;
    let created: serde_json::Value = res.json().await.unwrap();
    let upload = created["url"].as_str().unwrap().strip_prefix("http://localhost:3000").unwrap().to_owned();
    let part = reqwest::multipart::Part::bytes(vec![1u8; 10]).file_name("scan.pdf");
    let res = app
        .client
        .post(app.url(&upload))
        .header("accept", "application/json")
        .multipart(reqwest::multipart::Form::new().part("file", part))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    app.state.background.settle().await;
    for _ in 0..100 {
        let done: bool = sqlx::query_scalar("select count(*) = 1 from share_deliveries where completed_at is not null").fetch_one(&pool).await.unwrap();
        if done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The job's own ticker may have sent some events already: every event is in exactly one
    // message, whichever run sent it.
    run_notify(&app).await;
    let marked: i64 = sqlx::query_scalar(
        "select (select count(*) from share_deliveries where notified_at is not null) + (select count(*) from shares where origin = 'request' and notified_at is not null)",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(marked, 2);
    let mail = smtp.wait_for(1).await;
    let files: Vec<String> = mail
        .iter()
        .filter(|m| header(m, "Subject").contains("file event"))
        .map(|raw| mail_parser::MessageParser::default().parse(raw.as_bytes()).expect("a parsable message").body_text(0).expect("a text body").into_owned())
        .collect();
    let body = files.concat();
    assert!(body.contains("Shares downloaded completely: 1") && body.contains("Files received through file requests: 1"), "{body}");
    assert_eq!(body.matches("downloaded completely: “contract.pdf”").count(), 1, "{body}");
    assert_eq!(body.matches("received: “scan.pdf”").count(), 1, "{body}");
    assert!(body.contains("http://localhost:3000/admin/shares"), "{body}");
    // Once: the next run has nothing new.
    assert_eq!(run_notify(&app).await.steps[1].counts, vec![("sent", 0)]);
    app.shutdown().await;

    // Not opted in: nothing about files. (A fresh folder for the new app: adopted on purpose.)
    sqlx::query("delete from settings where key = 'storage_marker_id'").execute(&pool).await.unwrap();
    let app = spawn_app_with(pool.clone(), &["--smtp-url", &url, "--notify-to", "ops@example.com"], |_| {}).await;
    assert_eq!(run_notify(&app).await.steps[1].counts, vec![("sent", 0), ("off", 1)]);
    app.shutdown().await;
}

/// A file email the SMTP server refused for a whole day is given up, counted and named in a
/// `notify.unsent` alert, never dropped silently; events from before file emails were switched
/// on are given up without an alert.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn file_emails_unsent_for_a_day_are_given_up_with_an_alert(pool: PgPool) {
    // An SMTP address nobody listens on: every send fails.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("smtp://127.0.0.1:{port}");
    let cookie = crate::shares::admin_cookie(&pool).await;
    let app = spawn_app_with(pool.clone(), &["--smtp-url", &url, "--notify-to", "ops@example.com", "--notify-files", "true"], |_| {}).await;
    for name in ["a.pdf", "b.pdf"] {
        let path = crate::shares::share_via_upload(&app, &cookie, name, crate::shares::body_of(1_000)).await;
        let res = app.client.post(app.url(&path)).send().await.unwrap();
        assert_eq!(res.bytes().await.unwrap().len(), 1_000);
    }
    app.state.background.settle().await;
    for _ in 0..100 {
        let done: bool = sqlx::query_scalar("select count(*) = 2 from share_deliveries where completed_at is not null").fetch_one(&pool).await.unwrap();
        if done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    run_notify(&app).await;
    let unsent: i64 = sqlx::query_scalar("select count(*) from share_deliveries where notified_at is null").fetch_one(&pool).await.unwrap();
    assert_eq!(unsent, 2, "a refused send is tried again later");
    // A day on: file emails on for two days; one download a day ago (promised), one three days
    // ago (before they were on).
    sqlx::query("update settings set updated_at = updated_at - interval '2 days' where key = 'notify_files_on_since'").execute(&pool).await.unwrap();
    sqlx::query("update share_deliveries set completed_at = completed_at - interval '25 hours' where id = (select min(id) from share_deliveries)")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("update share_deliveries set completed_at = completed_at - interval '3 days' where id = (select max(id) from share_deliveries)")
        .execute(&pool)
        .await
        .unwrap();
    run_notify(&app).await;
    let unsent: i64 = sqlx::query_scalar("select count(*) from share_deliveries where notified_at is null").fetch_one(&pool).await.unwrap();
    assert_eq!(unsent, 0, "given up, not retried for ever");
    let alerts: Vec<(String, serde_json::Value)> =
        sqlx::query_as("select kind, params from alerts where resolved_at is null and kind = 'notify.unsent'").fetch_all(&pool).await.unwrap();
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(alerts[0].1["n"], 1, "only the email promised while file emails were on: {alerts:?}");
    app.shutdown().await;
}
