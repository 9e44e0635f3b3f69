//! The content bundle on S3 (publish, manifest, verification) and the
//! content cache that serves it — with S3 on the emulator (or AWS) and with the
//! filesystem source the local server uses.

use crate::store_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use aws_sdk_s3::primitives::ByteStream;
use tutorflow::content::{ContentFiles, ContentSource, FsSource, SourceError};
use tutorflow::store::{ContentCache, LoadError, PublishError, S3Source, publish};

use store_support::*;

const UNIT: &str = "workflows/courses/storetest/units/one-step-equations.yaml";
const TITLE: &str = "title: One-step equations";

/// A clock the test moves by hand.
#[derive(Clone)]
struct ManualClock {
    start: Instant,
    offset_ms: Arc<AtomicU64>,
}

impl ManualClock {
    fn new() -> Self {
        ManualClock {
            start: Instant::now(),
            offset_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    fn advance(&self, by: Duration) {
        self.offset_ms
            .fetch_add(by.as_millis() as u64, Ordering::SeqCst);
    }

    fn clock(&self) -> tutorflow::store::InstantSource {
        let me = self.clone();
        Arc::new(move || me.start + Duration::from_millis(me.offset_ms.load(Ordering::SeqCst)))
    }
}

/// Counts what the cache asks of its source.
struct Counting {
    inner: Arc<dyn ContentSource>,
    fingerprints: AtomicU32,
    fetches: AtomicU32,
}

impl Counting {
    fn wrap(inner: impl ContentSource + 'static) -> Arc<Self> {
        Arc::new(Counting {
            inner: Arc::new(inner),
            fingerprints: AtomicU32::new(0),
            fetches: AtomicU32::new(0),
        })
    }

    fn counts(&self) -> (u32, u32) {
        (
            self.fingerprints.load(Ordering::SeqCst),
            self.fetches.load(Ordering::SeqCst),
        )
    }
}

#[async_trait]
impl ContentSource for Counting {
    async fn fingerprint(&self) -> Result<String, SourceError> {
        self.fingerprints.fetch_add(1, Ordering::SeqCst);
        self.inner.fingerprint().await
    }

    async fn fetch(&self) -> Result<ContentFiles, SourceError> {
        self.fetches.fetch_add(1, Ordering::SeqCst);
        self.inner.fetch().await
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

fn unit_title(cache: &ContentCache) -> String {
    cache.current().courses["storetest"].units["one-step-equations"]
        .title
        .clone()
}

const MINUTE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn local_file_changes_are_picked_up_within_the_refresh_interval() {
    let dir = tempfile::tempdir().unwrap();
    let files = valid_bundle().await;
    write_bundle(dir.path(), &files);
    let source = Counting::wrap(FsSource::new(dir.path()));
    let time = ManualClock::new();
    let cache = ContentCache::load_with_clock(source.clone(), MINUTE, time.clock())
        .await
        .unwrap();
    assert_eq!(cache.bundle().await.version, files.version);
    assert_eq!(source.counts(), (1, 1));

    let changed = edited(&files, UNIT, TITLE, "title: Equations in one step");
    write_bundle(dir.path(), &changed);
    // Within the interval: no check at all, however many requests.
    time.advance(Duration::from_secs(59));
    for _ in 0..100 {
        assert_eq!(cache.bundle().await.version, files.version);
    }
    assert_eq!(source.counts(), (1, 1));
    time.advance(Duration::from_secs(1));
    assert_eq!(cache.bundle().await.version, changed.version);
    assert_eq!(unit_title(&cache), "Equations in one step");
    // One fingerprint for the check plus one taken while loading.
    assert_eq!(source.counts(), (3, 2));
    // Nothing changed since: a check, no fetch.
    time.advance(MINUTE);
    cache.bundle().await;
    assert_eq!(source.counts(), (4, 2));
}

#[tokio::test]
async fn broken_local_content_keeps_the_previous_bundle_serving() {
    let dir = tempfile::tempdir().unwrap();
    let files = valid_bundle().await;
    write_bundle(dir.path(), &files);
    let source = Counting::wrap(FsSource::new(dir.path()));
    let time = ManualClock::new();
    let cache = ContentCache::load_with_clock(source.clone(), MINUTE, time.clock())
        .await
        .unwrap();

    let broken = edited(&files, UNIT, TITLE, "title: [unclosed");
    write_bundle(dir.path(), &broken);
    time.advance(MINUTE);
    assert_eq!(cache.bundle().await.version, files.version);
    let fetches = source.counts().1;
    // The same broken content is not fetched again at every check.
    time.advance(MINUTE);
    assert_eq!(cache.bundle().await.version, files.version);
    assert_eq!(source.counts().1, fetches);
    // Fixed: loaded at the next check.
    let fixed = edited(&files, UNIT, TITLE, "title: Fixed title");
    write_bundle(dir.path(), &fixed);
    time.advance(MINUTE);
    assert_eq!(cache.bundle().await.version, fixed.version);
}

#[tokio::test]
async fn invalid_content_cannot_be_the_first_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let files = edited(&valid_bundle().await, UNIT, TITLE, "title: [unclosed");
    write_bundle(dir.path(), &files);
    let err = ContentCache::load(Arc::new(FsSource::new(dir.path())), MINUTE)
        .await
        .unwrap_err();
    assert!(matches!(err, LoadError::Invalid { .. }), "{err}");
    assert!(
        err.to_string().contains("one-step-equations.yaml:"),
        "{err}"
    );
    let empty = tempfile::tempdir().unwrap();
    let err = ContentCache::load(Arc::new(FsSource::new(empty.path())), MINUTE)
        .await
        .unwrap_err();
    assert!(matches!(err, LoadError::Source(_)), "{err}");
}

#[tokio::test]
async fn a_published_bundle_loads_back_exactly() {
    let Some(aws) = aws("a_published_bundle_loads_back_exactly") else {
        return;
    };
    let (client, bucket, _cleanup) = s3_bucket(&aws).await;
    let files = valid_bundle().await;
    let report = publish(&client, &bucket, "/content/", &files, t(0))
        .await
        .unwrap();
    assert_eq!(report.version, files.version);
    assert_eq!(report.files, files.files.len());
    assert_eq!(
        report.manifest_url,
        format!("s3://{bucket}/content/manifest.json")
    );
    let source = S3Source::new(client.clone(), &bucket, "content");
    assert_eq!(source.fetch().await.unwrap(), files);
    let fingerprint = source.fingerprint().await.unwrap();
    assert_eq!(source.fingerprint().await.unwrap(), fingerprint);
    // Republishing the same content changes nothing a reader can see but
    // the manifest's timestamp.
    publish(&client, &bucket, "content", &files, t(1))
        .await
        .unwrap();
    assert_eq!(source.fetch().await.unwrap(), files);
    // Another prefix is another bundle.
    let other = S3Source::new(client, &bucket, "elsewhere");
    assert!(matches!(other.fetch().await, Err(SourceError::Invalid(_))));
}

#[tokio::test]
async fn a_republished_file_is_picked_up_by_a_running_process_within_the_interval() {
    let Some(aws) = aws("a_republished_file_is_picked_up") else {
        return;
    };
    let (client, bucket, _cleanup) = s3_bucket(&aws).await;
    let files = valid_bundle().await;
    publish(&client, &bucket, "", &files, t(0)).await.unwrap();
    let source = Counting::wrap(S3Source::new(client.clone(), &bucket, ""));
    let refresh = Duration::from_millis(500);
    let cache = ContentCache::load(source.clone(), refresh).await.unwrap();
    // Requests within the interval are served from memory.
    for _ in 0..30 {
        assert_eq!(cache.bundle().await.version, files.version);
    }
    assert_eq!(source.counts(), (1, 1));

    let changed = edited(&files, UNIT, TITLE, "title: Equations in one step");
    publish(&client, &bucket, "", &changed, t(1)).await.unwrap();
    let published = Instant::now();
    while cache.bundle().await.version != changed.version {
        assert!(
            published.elapsed() < refresh + Duration::from_secs(2),
            "the new bundle was not picked up within the refresh interval"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(unit_title(&cache), "Equations in one step");
    // Polling every 20 ms, yet only the initial load, a few cheap checks
    // and one reload reached S3.
    let (fingerprints, fetches) = source.counts();
    assert!(fingerprints <= 4, "{fingerprints} fingerprint checks");
    assert_eq!(fetches, 2);
}

#[tokio::test]
async fn invalid_content_is_never_published() {
    let Some(aws) = aws("invalid_content_is_never_published") else {
        return;
    };
    let (client, bucket, _cleanup) = s3_bucket(&aws).await;
    let broken = edited(&valid_bundle().await, UNIT, TITLE, "title: [unclosed");
    match publish(&client, &bucket, "", &broken, t(0)).await {
        Err(PublishError::Invalid(diagnostics)) => {
            assert!(diagnostics.to_string().contains("one-step-equations.yaml"))
        }
        other => panic!("expected the bundle to be refused, got {other:?}"),
    }
    let listed = client
        .list_objects_v2()
        .bucket(&bucket)
        .send()
        .await
        .unwrap();
    assert_eq!(listed.key_count(), Some(0), "nothing may be uploaded");
}

#[tokio::test]
async fn a_missing_manifest_is_a_clear_error() {
    let Some(aws) = aws("a_missing_manifest_is_a_clear_error") else {
        return;
    };
    let (client, bucket, _cleanup) = s3_bucket(&aws).await;
    let source = S3Source::new(client, &bucket, "content");
    for err in [
        source.fingerprint().await.unwrap_err(),
        source.fetch().await.unwrap_err(),
    ] {
        assert!(matches!(err, SourceError::Invalid(_)), "{err}");
        assert!(
            err.to_string().contains(&format!(
                "no manifest at s3://{bucket}/content/manifest.json"
            )),
            "{err}"
        );
    }
    let err = ContentCache::load(Arc::new(source), MINUTE)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no manifest"), "{err}");
}

#[tokio::test]
async fn a_mismatched_or_missing_manifest_is_refused_and_the_previous_bundle_keeps_serving() {
    let Some(aws) = aws("a_mismatched_manifest_is_refused") else {
        return;
    };
    let (client, bucket, _cleanup) = s3_bucket(&aws).await;
    let files = valid_bundle().await;
    publish(&client, &bucket, "p", &files, t(0)).await.unwrap();
    let source = S3Source::new(client.clone(), &bucket, "p");
    let time = ManualClock::new();
    let cache = ContentCache::load_with_clock(Arc::new(source.clone()), MINUTE, time.clock())
        .await
        .unwrap();

    // A new bundle whose file was altered after its manifest was written.
    let changed = edited(&files, UNIT, TITLE, "title: Equations in one step");
    publish(&client, &bucket, "p", &changed, t(1))
        .await
        .unwrap();
    let put = |key: String, body: &str| {
        client
            .put_object()
            .bucket(&bucket)
            .key(key)
            .body(ByteStream::from(body.as_bytes().to_vec()))
            .send()
    };
    let mut tampered = changed.files.clone();
    tampered.insert(
        UNIT.to_owned(),
        changed.files[UNIT].replace("Equations in one step", "Tampered"),
    );
    put(
        format!("p/bundles/{}.json", changed.version),
        &serde_json::to_string(&tampered).unwrap(),
    )
    .await
    .unwrap();
    let err = source.fetch().await.unwrap_err();
    assert!(matches!(err, SourceError::Invalid(_)), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("{UNIT}: content does not match the manifest")),
        "{err}"
    );
    time.advance(MINUTE);
    assert_eq!(cache.bundle().await.version, files.version);

    // A manifest whose bundle object is gone.
    client
        .delete_object()
        .bucket(&bucket)
        .key(format!("p/bundles/{}.json", changed.version))
        .send()
        .await
        .unwrap();
    let err = source.fetch().await.unwrap_err();
    assert!(matches!(err, SourceError::Invalid(_)), "{err}");
    assert!(
        err.to_string().contains(&format!(
            "the manifest names bundle {} but s3://{bucket}/p/bundles/{}.json does not exist",
            changed.version, changed.version
        )),
        "{err}"
    );
    time.advance(MINUTE);
    assert_eq!(cache.bundle().await.version, files.version);

    // A manifest that is not one.
    put("p/manifest.json".into(), "{\"format\": 1}")
        .await
        .unwrap();
    let err = source.fetch().await.unwrap_err();
    assert!(err.to_string().contains("is not a valid manifest"), "{err}");
    time.advance(MINUTE);
    assert_eq!(cache.bundle().await.version, files.version);

    // No manifest at all.
    client
        .delete_object()
        .bucket(&bucket)
        .key("p/manifest.json")
        .send()
        .await
        .unwrap();
    time.advance(MINUTE);
    assert_eq!(cache.bundle().await.version, files.version);
    assert_eq!(unit_title(&cache), "One-step equations");

    // A proper publish is picked up again.
    publish(&client, &bucket, "p", &changed, t(2))
        .await
        .unwrap();
    time.advance(MINUTE);
    assert_eq!(cache.bundle().await.version, changed.version);
}
