//! Start-up checks of the real binary.

/// The seed's warning: a wrong storage path would make every delete "succeed". Ebb refuses to
/// start instead, and says what to fix.
#[test]
fn serve_refuses_to_start_when_the_storage_folder_is_missing() {
    let missing = std::env::temp_dir().join(format!("ebb-missing-{}", std::process::id())).join("blobs");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ebb"))
        .args(["--storage-dir", missing.to_str().unwrap(), "--bind", "127.0.0.1:0", "serve"])
        .env("DATABASE_URL", std::env::var("DATABASE_URL").expect("tests run with DATABASE_URL"))
        .output()
        .expect("the ebb binary runs");
    assert!(!out.status.success(), "must not start");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("storage self-check failed for EBB_STORAGE_DIR="), "{stderr}");
    assert!(!missing.exists(), "Ebb does not create the folder itself");
}

/// A storage folder inside the served site folder would publish every stored file.
#[test]
fn serve_refuses_a_storage_folder_inside_the_site_folder() {
    let site = tempfile::tempdir().unwrap();
    let inside = site.path().join("pkg").join("blobs");
    std::fs::create_dir_all(&inside).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ebb"))
        .args(["--storage-dir", inside.to_str().unwrap(), "--site-root", site.path().to_str().unwrap(), "--bind", "127.0.0.1:0", "serve"])
        .env("DATABASE_URL", std::env::var("DATABASE_URL").expect("tests run with DATABASE_URL"))
        .output()
        .expect("the ebb binary runs");
    assert!(!out.status.success(), "must not start");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is inside the served site folder LEPTOS_SITE_ROOT="), "{stderr}");
    // The same folder reached through `..` is the same folder.
    let dotted = site.path().join("x").join("..").join("pkg").join("blobs");
    std::fs::create_dir_all(site.path().join("x")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ebb"))
        .args(["--storage-dir", dotted.to_str().unwrap(), "--site-root", site.path().to_str().unwrap(), "--bind", "127.0.0.1:0", "serve"])
        .env("DATABASE_URL", std::env::var("DATABASE_URL").expect("tests run with DATABASE_URL"))
        .output()
        .expect("the ebb binary runs");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is inside the served site folder"));
}

/// The first admin's invite link is a secret: printed to the terminal (stderr), never into the
/// logs (stdout, here JSON).
#[test]
fn the_first_invite_link_is_printed_to_the_terminal_and_never_logged() {
    use std::io::Read;
    let storage = tempfile::tempdir().unwrap();
    let base = std::env::var("DATABASE_URL").expect("tests run with DATABASE_URL");
    // A database of its own with no admin (sqlx::test's are not reachable from a child process).
    let name = format!("ebb_invite_{}", std::process::id());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let pool = sqlx::PgPool::connect(&base).await.unwrap();
        sqlx::query(&format!("drop database if exists {name}")).execute(&pool).await.unwrap();
        sqlx::query(&format!("create database {name}")).execute(&pool).await.unwrap();
    });
    let url = {
        let mut u = url::Url::parse(&base).unwrap();
        u.set_path(&name);
        u.to_string()
    };
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ebb"))
        .args(["--storage-dir", storage.path().to_str().unwrap(), "--bind", "127.0.0.1:0", "--log-format", "json", "serve"])
        .env("DATABASE_URL", &url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the ebb binary runs");
    // Wait for the listening line (logs and the terminal share stderr; stdout stays for what a
    // command prints), then stop it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut stderr = child.stderr.take().unwrap();
    let mut all = String::new();
    let mut buf = [0u8; 4096];
    while !all.contains("Ebb is listening") && std::time::Instant::now() < deadline {
        let n = stderr.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        all.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    all.push_str(&String::from_utf8_lossy(&out.stderr));
    rt.block_on(async {
        let pool = sqlx::PgPool::connect(&base).await.unwrap();
        sqlx::query(&format!("drop database if exists {name} with (force)")).execute(&pool).await.unwrap();
    });
    // The log lines are JSON; what is printed for the person at the terminal is not.
    let (logs, terminal): (Vec<&str>, Vec<&str>) = all.lines().partition(|l| l.trim_start().starts_with('{'));
    let (logs, terminal) = (logs.join("\n"), terminal.join("\n"));
    assert!(out.stdout.is_empty(), "nothing on stdout: {}", String::from_utf8_lossy(&out.stdout));
    assert!(logs.contains("Ebb is listening"), "started: {logs}\n{terminal}");
    assert!(terminal.contains("/invite/"), "the link is on the terminal: {terminal}");
    assert!(!logs.contains("/invite/"), "the link is not in the logs: {logs}");
    assert!(logs.contains("printed to the terminal"), "the logs say where it went");
}

/// Every secret fails closed: a corrupted secret row stops the start-up with a message naming the
/// row, instead of a fallback anyone could compute (rate-limit keys, client hashes, signed
/// redirects and signed links all depend on them).
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_corrupted_secret_stops_the_start_up_and_names_its_setting(pool: sqlx::PgPool) {
    for (key, bad) in [("audit_client_secret", "not hex at all"), ("audit_client_secret", "abcd"), ("blob_url_secret", "")] {
        sqlx::query("delete from settings where key in ('audit_client_secret', 'blob_url_secret')").execute(&pool).await.unwrap();
        sqlx::query("insert into settings (key, value) values ($1, $2)").bind(key).bind(bad).execute(&pool).await.unwrap();
        let storage = tempfile::tempdir().unwrap();
        let config = crate::helpers::test_config(&["--storage-dir", storage.path().to_str().unwrap()]);
        // The keyring's key stops the state being built; the signed URLs' secret, the store check.
        let err = match server::build_state(&config, pool.clone()).await {
            Err(e) => e,
            Ok(state) => server::check_storage(&state, &config).await.expect_err("must not start with an unreadable secret"),
        };
        assert!(err.contains(&format!("'{key}'")), "{key}={bad:?}: {err}");
        // Nothing was replaced: the row is left for a person to restore.
        let kept: String = sqlx::query_scalar("select value from settings where key = $1").bind(key).fetch_one(&pool).await.unwrap();
        assert_eq!(kept, bad);
    }
}
