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
