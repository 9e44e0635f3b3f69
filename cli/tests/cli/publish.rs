//! `tutorflow publish`: refuses invalid content before touching S3, and
//! publishes a valid bundle that the S3 source then reads back.

use std::path::Path;
use std::process::{Command, Output};

use tutorflow::content::{Bundle, ContentSource, FsSource};
use tutorflow::store::{S3Source, s3_client};

const ENDPOINT_VAR: &str = "TUTORFLOW_TEST_AWS_ENDPOINT";

fn emulator(test: &str) -> Option<String> {
    match std::env::var(ENDPOINT_VAR) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{ENDPOINT_VAR} is not set: CI must run this against the emulator")
        }
        _ => {
            eprintln!("note: {test} skipped: set {ENDPOINT_VAR} (scripts/test.sh starts moto)");
            None
        }
    }
}

/// The shipped workflow, prompts and blueprints with a one-unit course.
fn write_small_bundle(dir: &Path) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let copy = |from: &str, to: &str| {
        let target = dir.join(to);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(repo.join(from), target).unwrap();
    };
    for sub in ["prompts", "workflows/blueprints", "workflows"] {
        for entry in std::fs::read_dir(repo.join(sub)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                let name = path.file_name().unwrap().to_string_lossy();
                copy(&format!("{sub}/{name}"), &format!("{sub}/{name}"));
            }
        }
    }
    copy(
        "workflows/courses/prealgebra/units/one-step-equations.yaml",
        "workflows/courses/small/units/one-step-equations.yaml",
    );
    std::fs::write(
        dir.join("workflows/courses/small/course.yaml"),
        "id: small\ntitle: Small course\nentry_unit: one-step-equations\n\
         units:\n  - id: one-step-equations\n",
    )
    .unwrap();
}

fn tutorflow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(args)
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env_remove("TUTORFLOW_CONTENT_PREFIX")
        .output()
        .unwrap()
}

#[test]
fn invalid_content_is_refused_before_anything_is_uploaded() {
    let dir = tempfile::tempdir().unwrap();
    write_small_bundle(dir.path());
    let unit = dir
        .path()
        .join("workflows/courses/small/units/one-step-equations.yaml");
    let text = std::fs::read_to_string(&unit).unwrap();
    std::fs::write(&unit, text.replacen("title: ", "title: [", 1)).unwrap();
    let root = dir.path().to_str().unwrap();
    // Nothing listens on port 9: any upload attempt would fail differently.
    let out = tutorflow(&[
        "publish",
        "--bucket",
        "b",
        "--endpoint-url",
        "http://127.0.0.1:9",
        root,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!(
            "{root}/workflows/courses/small/units/one-step-equations.yaml:"
        )),
        "{stdout}"
    );
    assert!(stderr.contains("nothing was published"), "{stderr}");
}

#[tokio::test]
async fn content_only_the_thorough_check_rejects_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write_small_bundle(dir.path());
    // A scenario so rare that one item can be found (a cold start loads it)
    // but its draws are almost never accepted (validation refuses it).
    let blueprint = dir.path().join("workflows/blueprints/add-2digit.yaml");
    let text = std::fs::read_to_string(&blueprint).unwrap();
    let rare = "when: \"ones < 10 and tens < 10 and a = 57\"";
    std::fs::write(
        &blueprint,
        text.replacen("when: \"ones < 10 and tens < 10\"", rare, 1),
    )
    .unwrap();
    let files = FsSource::new(dir.path()).fetch().await.unwrap();
    assert!(Bundle::load(&files).is_ok());
    assert!(Bundle::validate(&files).is_err());
    let root = dir.path().to_str().unwrap();
    // Nothing listens on port 9: any upload attempt would fail differently.
    let out = tutorflow(&[
        "publish",
        "--bucket",
        "b",
        "--endpoint-url",
        "http://127.0.0.1:9",
        root,
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("{root}/workflows/blueprints/add-2digit.yaml:"))
            && stdout.contains("accepts only"),
        "{stdout}"
    );
    assert!(stderr.contains("nothing was published"), "{stderr}");
}

#[test]
fn a_missing_bucket_argument_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_tutorflow"))
        .args(["publish", "."])
        .env_remove("TUTORFLOW_CONTENT_BUCKET")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bucket"));
}

#[tokio::test]
async fn a_valid_bundle_is_published_and_reads_back() {
    let Some(endpoint) = emulator("a_valid_bundle_is_published_and_reads_back") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write_small_bundle(dir.path());
    let client = s3_client(Some(&endpoint), None).await;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let bucket = format!("tutorflow-cli-{}-{nanos}", std::process::id());
    client.create_bucket().bucket(&bucket).send().await.unwrap();

    let out = tutorflow(&[
        "publish",
        "--bucket",
        &bucket,
        "--prefix",
        "content",
        "--endpoint-url",
        &endpoint,
        dir.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("to s3://{bucket}/content/manifest.json")),
        "{stdout}"
    );
    let local = FsSource::new(dir.path()).fetch().await.unwrap();
    let published = S3Source::new(client, &bucket, "content")
        .fetch()
        .await
        .unwrap();
    assert_eq!(published, local);
    assert!(stdout.contains(&local.version[..12]), "{stdout}");
}
