//! The content bundle on S3, as written by `tutorflow publish`.
//!
//! Layout under the configured prefix:
//! - `bundles/<version>.json`: the whole bundle as one object (a JSON
//!   object from each file's path to its text), named after the bundle's
//!   content hash, so a cold start reads it in one round trip;
//! - `manifest.json`: the bundle version and every file's path, size and
//!   SHA-256. Publish writes it last, so a reader never sees a bundle that
//!   is not in place; it is the only object that changes.
//!
//! Readers check the manifest's ETag (one HEAD request) to notice a new
//! bundle, and verify every file against the manifest when loading one.
//! Old bundle objects are left in place: a reader still loading the
//! previous version keeps working, and republishing an old version is a
//! rollback. Prune them with a lifecycle rule if needed.

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use aws_sdk_s3::Client;
use aws_sdk_s3::error::{DisplayErrorContext, SdkError};
use aws_sdk_s3::primitives::ByteStream;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::content::source::{BUNDLE_DIRS, hex};
use crate::content::{Bundle, ContentFiles, ContentSource, Diagnostics, SourceError};

pub const MANIFEST_FILE: &str = "manifest.json";
/// The manifest format this build reads and writes (1 had one object per
/// file).
const MANIFEST_FORMAT: u32 = 2;
/// Largest manifest or bundle object read; content is text, this is generous.
const MAX_OBJECT_BYTES: i64 = 16 * 1024 * 1024;

/// What `manifest.json` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    pub format: u32,
    /// Content hash of the whole bundle ([`ContentFiles::version`]).
    pub bundle_version: String,
    pub published_at: DateTime<Utc>,
    pub files: Vec<ManifestEntry>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestEntry {
    /// `/`-separated path relative to the bundle root.
    pub path: String,
    pub size: u64,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
}

/// Where a bundle lives in a bucket.
#[derive(Debug, Clone)]
struct Location {
    bucket: String,
    /// Empty, or ending with `/`.
    prefix: String,
}

impl Location {
    fn new(bucket: &str, prefix: &str) -> Self {
        let prefix = prefix.trim_matches('/');
        Location {
            bucket: bucket.to_owned(),
            prefix: if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            },
        }
    }

    fn manifest_key(&self) -> String {
        format!("{}{MANIFEST_FILE}", self.prefix)
    }

    fn bundle_key(&self, version: &str) -> String {
        format!("{}bundles/{version}.json", self.prefix)
    }

    fn url(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.bucket)
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn unavailable<E, R>(what: String, e: SdkError<E, R>) -> SourceError
where
    E: std::error::Error + 'static,
    R: std::fmt::Debug,
{
    SourceError::Unavailable(format!("{what}: {}", DisplayErrorContext(&e)))
}

/// The published bundle in `s3://bucket/prefix`.
#[derive(Debug, Clone)]
pub struct S3Source {
    client: Client,
    at: Location,
}

impl S3Source {
    pub fn new(client: Client, bucket: &str, prefix: &str) -> Self {
        S3Source {
            client,
            at: Location::new(bucket, prefix),
        }
    }

    fn no_manifest(&self) -> SourceError {
        SourceError::Invalid(format!(
            "no manifest at {}: nothing has been published there (run `tutorflow publish`)",
            self.at.url(&self.at.manifest_key())
        ))
    }

    /// An object's bytes and ETag, or `None` when there is no object at `key`.
    async fn read_object(
        &self,
        key: &str,
    ) -> Result<Option<(Vec<u8>, Option<String>)>, SourceError> {
        let url = self.at.url(key);
        let out = self
            .client
            .get_object()
            .bucket(&self.at.bucket)
            .key(key)
            .send()
            .await;
        match out {
            Ok(out) => {
                let etag = out.e_tag().map(str::to_owned);
                let bytes = read_body(out.content_length(), out.body, &url).await?;
                Ok(Some((bytes, etag)))
            }
            Err(e) if e.as_service_error().is_some_and(|e| e.is_no_such_key()) => Ok(None),
            Err(e) => Err(unavailable(url, e)),
        }
    }

    /// The manifest and its ETag (the fingerprint `fingerprint` reads with
    /// a HEAD request).
    async fn read_manifest(&self) -> Result<(Manifest, String), SourceError> {
        let key = self.at.manifest_key();
        let (bytes, etag) = self
            .read_object(&key)
            .await?
            .ok_or_else(|| self.no_manifest())?;
        let etag = etag
            .ok_or_else(|| SourceError::Unavailable(format!("{}: no ETag", self.at.url(&key))))?;
        let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| {
            SourceError::Invalid(format!(
                "{} is not a valid manifest: {e}",
                self.at.url(&key)
            ))
        })?;
        check_manifest(&manifest)
            .map_err(|problem| SourceError::Invalid(format!("{}: {problem}", self.at.url(&key))))?;
        Ok((manifest, etag))
    }

    /// The files of the bundle `manifest` names.
    async fn read_bundle(&self, manifest: &Manifest) -> Result<ContentFiles, SourceError> {
        let key = self.at.bundle_key(&manifest.bundle_version);
        let url = self.at.url(&key);
        let (bytes, _) = self.read_object(&key).await?.ok_or_else(|| {
            SourceError::Invalid(format!(
                "the manifest names bundle {} but {url} does not exist",
                manifest.bundle_version
            ))
        })?;
        let files: BTreeMap<String, String> = serde_json::from_slice(&bytes).map_err(|e| {
            SourceError::Invalid(format!("{url} is not a bundle object (path to text): {e}"))
        })?;
        check_against_manifest(&files, manifest)?;
        let files = ContentFiles::new(files);
        if files.version != manifest.bundle_version {
            return Err(SourceError::Invalid(format!(
                "{}: bundleVersion {} does not match the files' content hash {}",
                self.at.url(&self.at.manifest_key()),
                manifest.bundle_version,
                files.version
            )));
        }
        Ok(files)
    }
}

async fn read_body(
    length: Option<i64>,
    body: ByteStream,
    url: &str,
) -> Result<Vec<u8>, SourceError> {
    if length.is_some_and(|n| n > MAX_OBJECT_BYTES) {
        return Err(SourceError::Invalid(format!(
            "{url} is larger than {MAX_OBJECT_BYTES} bytes"
        )));
    }
    let bytes = body
        .collect()
        .await
        .map_err(|e| SourceError::Unavailable(format!("{url}: {e}")))?;
    Ok(bytes.into_bytes().to_vec())
}

/// A manifest must list each file once, inside the bundle directories.
fn check_manifest(manifest: &Manifest) -> Result<(), String> {
    if manifest.format != MANIFEST_FORMAT {
        return Err(format!(
            "manifest format {} is not supported (this build reads {MANIFEST_FORMAT})",
            manifest.format
        ));
    }
    if manifest.bundle_version.is_empty()
        || !manifest
            .bundle_version
            .bytes()
            .all(|b| b.is_ascii_hexdigit())
    {
        return Err("bundleVersion must be a hex content hash".into());
    }
    let mut seen = BTreeSet::new();
    for entry in &manifest.files {
        let inside = BUNDLE_DIRS
            .iter()
            .any(|dir| entry.path.starts_with(&format!("{dir}/")));
        let clean = entry
            .path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
        if !inside || !clean {
            return Err(format!("`{}` is not a bundle file path", entry.path));
        }
        if !seen.insert(entry.path.as_str()) {
            return Err(format!("`{}` is listed twice", entry.path));
        }
    }
    if manifest.files.is_empty() {
        return Err("the manifest lists no files".into());
    }
    Ok(())
}

#[async_trait]
impl ContentSource for S3Source {
    async fn fingerprint(&self) -> Result<String, SourceError> {
        let key = self.at.manifest_key();
        let head = self
            .client
            .head_object()
            .bucket(&self.at.bucket)
            .key(&key)
            .send()
            .await;
        match head {
            Ok(out) => out
                .e_tag()
                .map(str::to_owned)
                .ok_or_else(|| SourceError::Unavailable(format!("{}: no ETag", self.at.url(&key)))),
            Err(e) if e.as_service_error().is_some_and(|e| e.is_not_found()) => {
                Err(self.no_manifest())
            }
            Err(e) => Err(unavailable(self.at.url(&key), e)),
        }
    }

    async fn fetch(&self) -> Result<ContentFiles, SourceError> {
        let (manifest, _) = self.read_manifest().await?;
        self.read_bundle(&manifest).await
    }

    /// Two requests, not three: the manifest's ETag is the fingerprint.
    async fn fetch_fingerprinted(&self) -> Result<(String, ContentFiles), SourceError> {
        let (manifest, etag) = self.read_manifest().await?;
        Ok((etag, self.read_bundle(&manifest).await?))
    }

    fn describe(&self) -> String {
        format!("s3://{}/{}", self.at.bucket, self.at.prefix)
    }
}

/// The bundle object holds exactly the manifest's files, each as listed.
fn check_against_manifest(
    files: &BTreeMap<String, String>,
    manifest: &Manifest,
) -> Result<(), SourceError> {
    for entry in &manifest.files {
        let Some(text) = files.get(&entry.path) else {
            return Err(SourceError::Invalid(format!(
                "{} is listed in the manifest but missing from the bundle object",
                entry.path
            )));
        };
        let actual = sha256_hex(text.as_bytes());
        if text.len() as u64 != entry.size || actual != entry.sha256 {
            return Err(SourceError::Invalid(format!(
                "{}: content does not match the manifest (sha256 {actual}, manifest says {})",
                entry.path, entry.sha256
            )));
        }
    }
    if files.len() != manifest.files.len() {
        let listed: BTreeSet<&str> = manifest.files.iter().map(|e| e.path.as_str()).collect();
        let extra = files.keys().find(|p| !listed.contains(p.as_str()));
        return Err(SourceError::Invalid(format!(
            "{} is in the bundle object but not in the manifest",
            extra.map_or("a file", String::as_str)
        )));
    }
    Ok(())
}

/// Why `publish` refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// The bundle does not validate; nothing was uploaded.
    #[error("the bundle is invalid ({} problems); nothing was published", .0.0.len())]
    Invalid(Diagnostics),
    #[error(transparent)]
    Upload(#[from] SourceError),
}

/// What `publish` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishReport {
    pub version: String,
    pub files: usize,
    /// `s3://bucket/prefix/manifest.json`
    pub manifest_url: String,
}

/// Validates `files` as a bundle (thoroughly: [`Bundle::validate`]), uploads
/// it as one object named after its version, then writes the manifest.
/// Invalid content is refused before anything is uploaded.
pub async fn publish(
    client: &Client,
    bucket: &str,
    prefix: &str,
    files: &ContentFiles,
    now: DateTime<Utc>,
) -> Result<PublishReport, PublishError> {
    Bundle::validate(files).map_err(PublishError::Invalid)?;
    let at = Location::new(bucket, prefix);
    let entries = files
        .files
        .iter()
        .map(|(path, text)| ManifestEntry {
            path: path.clone(),
            size: text.len() as u64,
            sha256: sha256_hex(text.as_bytes()),
        })
        .collect();
    let bundle = serde_json::to_vec(&files.files)
        .map_err(|e| SourceError::Invalid(format!("bundle object: {e}")))?;
    let key = at.bundle_key(&files.version);
    client
        .put_object()
        .bucket(&at.bucket)
        .key(&key)
        .content_type("application/json")
        .body(ByteStream::from(bundle))
        .send()
        .await
        .map_err(|e| unavailable(at.url(&key), e))?;
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        bundle_version: files.version.clone(),
        published_at: now,
        files: entries,
    };
    let body = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| SourceError::Invalid(format!("manifest: {e}")))?;
    let key = at.manifest_key();
    client
        .put_object()
        .bucket(&at.bucket)
        .key(&key)
        .content_type("application/json")
        .cache_control("no-cache")
        .body(ByteStream::from(body))
        .send()
        .await
        .map_err(|e| unavailable(at.url(&key), e))?;
    Ok(PublishReport {
        version: files.version.clone(),
        files: files.files.len(),
        manifest_url: at.url(&key),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(paths: &[&str]) -> Manifest {
        Manifest {
            format: MANIFEST_FORMAT,
            bundle_version: "ab12".into(),
            published_at: DateTime::from_timestamp(0, 0).unwrap(),
            files: paths
                .iter()
                .map(|p| ManifestEntry {
                    path: (*p).into(),
                    size: 1,
                    sha256: "00".into(),
                })
                .collect(),
        }
    }

    #[test]
    fn manifests_name_only_bundle_files() {
        assert!(check_manifest(&manifest(&["workflows/a.yaml", "prompts/b.txt"])).is_ok());
        for bad in [
            &["../etc/passwd"][..],
            &["workflows/../../x"],
            &["other/a.yaml"],
            &["workflows//a.yaml"],
            &["workflows/a.yaml", "workflows/a.yaml"],
            &[],
        ] {
            assert!(check_manifest(&manifest(bad)).is_err(), "{bad:?}");
        }
        let mut m = manifest(&["workflows/a.yaml"]);
        m.format = 1;
        assert!(check_manifest(&m).unwrap_err().contains("format 1"));
        m.format = MANIFEST_FORMAT;
        m.bundle_version = "../x".into();
        assert!(check_manifest(&m).is_err());
    }

    #[test]
    fn a_bundle_object_must_hold_exactly_the_manifests_files() {
        let files: BTreeMap<String, String> = [
            ("workflows/a.yaml".to_owned(), "id: a\n".to_owned()),
            ("prompts/b.txt".to_owned(), "Hello".to_owned()),
        ]
        .into();
        let listed = |files: &BTreeMap<String, String>| Manifest {
            files: files
                .iter()
                .map(|(path, text)| ManifestEntry {
                    path: path.clone(),
                    size: text.len() as u64,
                    sha256: sha256_hex(text.as_bytes()),
                })
                .collect(),
            ..manifest(&[])
        };
        let m = listed(&files);
        assert!(check_against_manifest(&files, &m).is_ok());

        let mut tampered = files.clone();
        tampered.insert("prompts/b.txt".into(), "Hellp".into());
        let err = check_against_manifest(&tampered, &m).unwrap_err();
        assert!(
            err.to_string()
                .contains("prompts/b.txt: content does not match"),
            "{err}"
        );

        let mut missing = files.clone();
        missing.remove("workflows/a.yaml");
        let err = check_against_manifest(&missing, &m).unwrap_err();
        assert!(
            err.to_string()
                .contains("workflows/a.yaml is listed in the manifest but missing"),
            "{err}"
        );

        let mut extra = files.clone();
        extra.insert("prompts/c.txt".into(), "?".into());
        let err = check_against_manifest(&extra, &m).unwrap_err();
        assert!(
            err.to_string()
                .contains("prompts/c.txt is in the bundle object but not in the manifest"),
            "{err}"
        );
    }

    #[test]
    fn prefixes_are_normalised() {
        assert_eq!(Location::new("b", "").manifest_key(), "manifest.json");
        assert_eq!(
            Location::new("b", "/content/").manifest_key(),
            "content/manifest.json"
        );
        assert_eq!(
            Location::new("b", "content").bundle_key("v1"),
            "content/bundles/v1.json"
        );
    }
}
