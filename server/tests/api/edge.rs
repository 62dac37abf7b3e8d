//! Slow clients cannot exhaust the server (issue 54): a trickling small body is cut at its
//! deadline, a slow upload at its minimum rate, connections beyond the cap are closed at once,
//! and a visitor still gets the page and the form while thousands of sockets trickle.

use std::time::{Duration, Instant};

use sqlx::PgPool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::{spawn_app_with, TestApp, VALID};

const ORIGIN: &str = "http://localhost:3000";

fn addr(app: &TestApp) -> String {
    app.base.strip_prefix("http://").unwrap().to_owned()
}

/// Reads what the server sends until it closes the connection or `within` passes; returns the
/// bytes and whether the connection was closed.
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (String, bool) {
    let mut got = Vec::new();
    let end = Instant::now() + within;
    let mut buf = [0u8; 4096];
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&got).into_owned(), false),
        }
    }
}

/// The contact form answers while bodies trickle, and a body that trickles one byte a second
/// (never pausing as long as the 30 s idle timeout) is cut at the small-body deadline with 408.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_trickling_small_body_is_cut_at_its_deadline(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), &["--small-body-deadline-secs", "3"], |_| {}).await;
    let head = format!(
        "POST /api/contact HTTP/1.1\r\nHost: localhost\r\nOrigin: {ORIGIN}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n"
    );
    let mut stream = TcpStream::connect(addr(&app)).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let mut answer = String::new();
    let mut closed = false;
    // One byte a second, for at most 20 s: the deadline (3 s) must end it long before.
    for _ in 0..20 {
        if stream.write_all(b"a").await.is_err() {
            break;
        }
        let (got, done) = read_until_closed(&mut stream, Duration::from_secs(1)).await;
        answer.push_str(&got);
        if done {
            closed = true;
            break;
        }
    }
    let took = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 408"), "a trickling body is answered 408: {answer:?} after {took:?}");
    assert!(answer.to_lowercase().contains("connection: close"), "{answer:?}");
    assert!(closed, "the connection is closed");
    assert!(took < Duration::from_secs(10), "cut at the deadline, not after {took:?}");
    assert_eq!(crate::helpers::inquiry_count(&pool).await, 0);
    // The site still answers, and a whole body in time is a submission.
    let res = app.post_contact(&VALID).await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    assert_eq!(crate::helpers::inquiry_count(&pool).await, 1);
}

/// An upload slower than the minimum rate is cut with 408; it gives its file request's lease back,
/// so the uploader can try again at once.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_slow_upload_is_cut_and_its_request_can_be_used_again(pool: PgPool) {
    let cookie = crate::shares::admin_cookie(&pool).await;
    let app = spawn_app_with(pool.clone(), &["--min-upload-bytes-per-sec", "20000", "--upload-rate-window-secs", "2"], |_| {}).await;
    let res =
        crate::helpers::call_form(&app, "/api/admin/file-requests/create", Some(&cookie), &[("expires_hours", "24"), ("max_mib", "5"), ("note", "")]).await;
    let created: serde_json::Value = res.json().await.unwrap();
    let path = created["url"].as_str().unwrap().strip_prefix("http://localhost:3000").unwrap().to_owned();
    let boundary = "XyZ";
    let part_head =
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"slow.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n");
    let total = part_head.len() + 1_000_000 + format!("\r\n--{boundary}--\r\n").len();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\nContent-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {total}\r\n\r\n{part_head}"
    );
    let mut stream = TcpStream::connect(addr(&app)).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let mut answer = String::new();
    // 1 KiB every half second (2 KiB/s, a tenth of the minimum) for at most 20 s.
    for _ in 0..40 {
        if stream.write_all(&[7u8; 1024]).await.is_err() {
            break;
        }
        let (got, done) = read_until_closed(&mut stream, Duration::from_millis(500)).await;
        answer.push_str(&got);
        if done {
            break;
        }
    }
    let took = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 408"), "a slow upload is answered 408: {answer:?} after {took:?}");
    assert!(took < Duration::from_secs(10), "cut after its first window, not after {took:?}");
    // Nothing stored; the lease is given back (in the background) and the link still works.
    let mut status = 0;
    for _ in 0..50 {
        let form = reqwest::multipart::Form::new()
            .part("file", reqwest::multipart::Part::bytes(vec![1u8; 1000]).file_name("fast.bin").mime_str("application/octet-stream").unwrap());
        status = app.client.post(app.url(&path)).header("accept", "application/json").multipart(form).send().await.unwrap().status().as_u16();
        if status != 409 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 201, "the uploader can send again");
    assert_eq!(app.stored_files().await.len(), 1, "only the second upload's file is stored");
}

/// Beyond the total cap, a new connection is closed before a byte is read; the server answers
/// again once connections close.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn connections_beyond_the_cap_are_closed_at_once(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), &["--max-connections", "16"], |_| {}).await;
    let mut held = Vec::new();
    for _ in 0..16 {
        let mut s = TcpStream::connect(addr(&app)).await.unwrap();
        // A request head begun and never finished: the connection stays open until the header
        // read timeout.
        s.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
        held.push(s);
    }
    // Let the server accept all of them.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut extra = TcpStream::connect(addr(&app)).await.unwrap();
    let _ = extra.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n").await;
    let (got, closed) = read_until_closed(&mut extra, Duration::from_secs(3)).await;
    assert!(closed && got.is_empty(), "the 17th connection is closed without an answer: {got:?}");
    drop(held);
    let mut ok = false;
    for _ in 0..50 {
        if let Ok(res) = reqwest::Client::new().get(app.url("/healthz")).send().await {
            ok = res.status() == 200;
            if ok {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ok, "closed connections give their places back");
}

/// Two thousand sockets trickle a request head; meanwhile a visitor gets the home page and sends
/// the contact form, and after the header read timeout the server has closed the trickling ones.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_visitor_is_served_while_two_thousand_sockets_trickle(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), &["--db-max-connections", "20"], |_| {}).await;
    let mut slow = Vec::new();
    for i in 0..2000 {
        match TcpStream::connect(addr(&app)).await {
            Ok(mut s) => {
                let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: ").await;
                slow.push(s);
            }
            Err(e) => panic!("connection {i} failed: {e}"),
        }
    }
    let started = Instant::now();
    let visitor = reqwest::Client::new();
    let page = visitor.get(app.url("/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("<form"), "the home page with its form");
    let res = app.post_contact(&VALID).await;
    assert_eq!(res.status(), 200);
    assert_eq!(crate::helpers::inquiry_count(&pool).await, 1);
    // A byte each, then wait out the header read timeout: the server hangs up on every one.
    for s in &mut slow {
        let _ = s.write_all(b"a").await;
    }
    let wait = (server::http::HEADER_READ_TIMEOUT + Duration::from_secs(3)).saturating_sub(started.elapsed());
    tokio::time::sleep(wait).await;
    let mut open = 0;
    for s in &mut slow {
        let mut buf = [0u8; 256];
        match tokio::time::timeout(Duration::from_millis(5), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {}
            // An answer (408) then a close counts as closed too.
            Ok(Ok(_)) => {
                let (_, closed) = read_until_closed(s, Duration::from_millis(200)).await;
                if !closed {
                    open += 1;
                }
            }
            Err(_) => open += 1,
        }
    }
    assert_eq!(open, 0, "every trickling connection was closed by the header read timeout");
}

/// The README's command-line recipe finishes a download after the client was killed (SIGKILL:
/// no cookie jar written): the receipt comes from the headers saved as they arrived. With real
/// curl and real wget.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_killed_curl_or_wget_finishes_its_download_with_the_readme_recipe(pool: PgPool) {
    let cookie = crate::shares::admin_cookie(&pool).await;
    let app = crate::helpers::spawn_app_on(pool.clone(), crate::helpers::Backend::Local, &[], |_| {}).await;
    let data = crate::shares::body_of(24 * 1024 * 1024 + 5);
    let dir = tempfile::tempdir().unwrap();
    let clients: [(&str, &str, &str); 2] = [
        // start (rate-limited, so the kill lands mid-file), resume
        (
            "curl",
            "curl -s -X POST --limit-rate 2M -D receipt.txt -o file.bin \"$URL\"",
            "curl -s -C - -H \"Cookie: $(grep -o 'ebb_receipt=[^;]*' receipt.txt)\" -o file.bin \"$URL\"",
        ),
        (
            "wget",
            "wget -q -S --method=POST --limit-rate=2m -O file.bin \"$URL\" 2> receipt.txt",
            "wget -q -c --header \"Cookie: $(grep -o 'ebb_receipt=[^;]*' receipt.txt)\" -O file.bin \"$URL\"",
        ),
    ];
    for (name, start, finish) in clients {
        let path = crate::shares::share_via_upload(&app, &cookie, "big.bin", data.clone()).await;
        let work = dir.path().join(name);
        std::fs::create_dir_all(&work).unwrap();
        let url = app.url(&path);
        let (work2, url2, start) = (work.clone(), url.clone(), start.to_owned());
        // Start, wait until part of the file is on disk, then SIGKILL the client.
        let partial = tokio::task::spawn_blocking(move || {
            let mut child = std::process::Command::new("sh").args(["-c", &format!("exec {start}")]).env("URL", &url2).current_dir(&work2).spawn().unwrap();
            let file = work2.join("file.bin");
            for _ in 0..200 {
                if std::fs::metadata(&file).map(|m| m.len() > 1024 * 1024).unwrap_or(false) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            child.kill().unwrap();
            child.wait().unwrap();
            std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0)
        })
        .await
        .unwrap();
        assert!(partial > 0 && partial < data.len() as u64, "{name}: killed mid-file ({partial} bytes)");
        let (work2, finish) = (work.clone(), finish.to_owned());
        let status =
            tokio::task::spawn_blocking(move || std::process::Command::new("sh").args(["-c", &finish]).env("URL", &url).current_dir(&work2).status().unwrap())
                .await
                .unwrap();
        assert!(status.success(), "{name}: the resume command failed");
        let got = std::fs::read(work.join("file.bin")).unwrap();
        assert_eq!(got.len(), data.len(), "{name}: the whole file");
        assert!(got == data, "{name}: the same bytes");
    }
}
