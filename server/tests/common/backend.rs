//! The two storage backends the suites run against: the local folder, and S3 on the real garage
//! server that `make test` starts (its address and key in `EBB_TEST_S3_*`). Each test gets its
//! own folder, or its own key prefix in the bucket.

/// Which blob store a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Local,
    S3,
}

fn s3_env(name: &str) -> String {
    std::env::var(format!("EBB_TEST_S3_{name}")).unwrap_or_else(|_| {
        panic!("EBB_TEST_S3_{name} is not set: the S3 tests need the garage server that `make test` starts (scripts/s3-local.sh); run them through `make test`, or start it and export EBB_TEST_S3_*")
    })
}

/// The storage flags of a test's configuration: a fresh folder (kept alive by the caller), or a
/// fresh prefix in the test bucket.
pub fn storage_args(backend: Backend, dir: &std::path::Path) -> Vec<String> {
    match backend {
        Backend::Local => vec!["--storage".into(), "local".into(), "--storage-dir".into(), dir.to_str().unwrap().into()],
        Backend::S3 => vec![
            "--storage".into(),
            "s3".into(),
            "--storage-dir".into(),
            dir.to_str().unwrap().into(),
            "--s3-endpoint".into(),
            s3_env("ENDPOINT"),
            "--s3-region".into(),
            std::env::var("EBB_TEST_S3_REGION").unwrap_or_else(|_| "us-east-1".into()),
            "--s3-bucket".into(),
            s3_env("BUCKET"),
            "--s3-path-style".into(),
            "true".into(),
            "--s3-access-key-id".into(),
            s3_env("ACCESS_KEY_ID"),
            "--s3-secret-access-key".into(),
            s3_env("SECRET_ACCESS_KEY"),
            "--s3-prefix".into(),
            format!("test-{}/", uuid::Uuid::new_v4().simple()),
        ],
    }
}

/// Generates, for each named `async fn name(pool: PgPool, backend: Backend)`, one
/// `#[sqlx::test]` per backend: `local::name` and `s3::name`.
#[macro_export]
macro_rules! on_both_backends {
    ($($name:ident),+ $(,)?) => {
        mod local {
            $(
                #[sqlx::test(migrator = "server::MIGRATOR")]
                async fn $name(pool: sqlx::PgPool) {
                    super::$name(pool, $crate::backend::Backend::Local).await
                }
            )+
        }
        mod s3 {
            $(
                #[sqlx::test(migrator = "server::MIGRATOR")]
                async fn $name(pool: sqlx::PgPool) {
                    super::$name(pool, $crate::backend::Backend::S3).await
                }
            )+
        }
    };
}

#[derive(clap::Parser)]
struct StoreCli {
    #[command(flatten)]
    config: server::Config,
}

/// The backend's store as Ebb would open it (fresh folder `dir`, or a fresh prefix).
#[allow(dead_code)]
pub fn open_store(backend: Backend, dir: &std::path::Path) -> Box<dyn app::storage::BlobStore> {
    open_store_with(&storage_args(backend, dir))
}

/// The store that storage flags `args` open.
#[allow(dead_code)]
pub fn open_store_with(args: &[String]) -> Box<dyn app::storage::BlobStore> {
    server::open_store(&config_of(args)).expect("storage opens")
}

/// The configuration storage flags `args` make.
#[allow(dead_code)]
pub fn config_of(args: &[String]) -> server::Config {
    let args = args.iter().cloned();
    <StoreCli as clap::Parser>::try_parse_from(["ebb", "--database-url", "postgres://unused"].into_iter().map(String::from).chain(args))
        .expect("valid storage flags")
        .config
}
