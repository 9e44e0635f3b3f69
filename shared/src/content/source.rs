//! Where the content bundle comes from: a directory locally, S3 in the cloud.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use async_trait::async_trait;
use sha2::{Digest, Sha256};

/// The bundle's files as text, by `/`-separated path relative to the bundle
/// root (`workflows/...`, `prompts/...`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContentFiles {
    /// Content hash identifying this exact set of files.
    pub version: String,
    pub files: BTreeMap<String, String>,
}

impl ContentFiles {
    /// Builds the set, computing its version from paths and contents.
    pub fn new(files: BTreeMap<String, String>) -> Self {
        let version = content_hash(&files);
        ContentFiles { version, files }
    }
}

/// SHA-256 over every path and content, in path order (hex).
pub fn content_hash(files: &BTreeMap<String, String>) -> String {
    let mut hasher = Sha256::new();
    for (path, text) in files {
        hasher.update((path.len() as u64).to_le_bytes());
        hasher.update(path.as_bytes());
        hasher.update((text.len() as u64).to_le_bytes());
        hasher.update(text.as_bytes());
    }
    hex(&hasher.finalize())
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path}: {message}")]
    Io { path: String, message: String },
    #[error("content source unavailable: {0}")]
    Unavailable(String),
    /// The published bundle is incomplete or does not match its manifest.
    #[error("content bundle rejected: {0}")]
    Invalid(String),
}

/// A place the content bundle is read from.
#[async_trait]
pub trait ContentSource: Send + Sync {
    /// A cheap fingerprint that changes whenever the content does (a manifest
    /// hash or ETag; file sizes and times locally). Never reads every file.
    async fn fingerprint(&self) -> Result<String, SourceError>;

    /// Every file of the bundle.
    async fn fetch(&self) -> Result<ContentFiles, SourceError>;

    /// Every file of the bundle and a fingerprint no newer than those
    /// files, so that content changing while it loads is seen as new at the
    /// next check. A source that reads both in one step overrides this
    /// (S3: the manifest's ETag comes with the manifest, saving a request).
    async fn fetch_fingerprinted(&self) -> Result<(String, ContentFiles), SourceError> {
        let fingerprint = self.fingerprint().await?;
        Ok((fingerprint, self.fetch().await?))
    }

    /// Where the content comes from, for messages.
    fn describe(&self) -> String;
}

/// The bundle in a directory holding `workflows/` and `prompts/`.
#[derive(Debug, Clone)]
pub struct FsSource {
    root: PathBuf,
}

/// Top-level directories that make up a bundle.
pub const BUNDLE_DIRS: [&str; 2] = ["workflows", "prompts"];

impl FsSource {
    /// `dir` may be the bundle root or its `workflows/` directory (then the
    /// sibling `prompts/` is used).
    pub fn new(dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        let root = if dir.file_name().is_some_and(|n| n == "workflows")
            && !dir.join("workflows").is_dir()
        {
            dir.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        } else {
            dir.to_path_buf()
        };
        FsSource { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Every bundle file with its relative path, in path order.
    fn walk(&self) -> Result<Vec<(String, PathBuf)>, SourceError> {
        let mut out = Vec::new();
        for top in BUNDLE_DIRS {
            let dir = self.root.join(top);
            if dir.is_dir() {
                walk_dir(&dir, top, &mut out)?;
            }
        }
        if out.is_empty() {
            return Err(SourceError::Io {
                path: self.root.display().to_string(),
                message: "no workflows/ or prompts/ directory here".into(),
            });
        }
        out.sort();
        Ok(out)
    }
}

fn walk_dir(dir: &Path, rel: &str, out: &mut Vec<(String, PathBuf)>) -> Result<(), SourceError> {
    let entries = std::fs::read_dir(dir).map_err(|e| io_error(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_error(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        let rel_path = format!("{rel}/{name}");
        let kind = entry.file_type().map_err(|e| io_error(&path, e))?;
        if kind.is_dir() {
            walk_dir(&path, &rel_path, out)?;
        } else if kind.is_file() && is_bundle_file(&name) {
            out.push((rel_path, path));
        }
    }
    Ok(())
}

/// Text files a bundle is made of; anything else (images, editor files) is skipped.
fn is_bundle_file(name: &str) -> bool {
    [".yaml", ".yml", ".txt", ".md", ".tsv"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

fn io_error(path: &Path, e: std::io::Error) -> SourceError {
    SourceError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

#[async_trait]
impl ContentSource for FsSource {
    async fn fingerprint(&self) -> Result<String, SourceError> {
        let mut hasher = Sha256::new();
        for (rel, path) in self.walk()? {
            let meta = std::fs::metadata(&path).map_err(|e| io_error(&path, e))?;
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            hasher.update(rel.as_bytes());
            hasher.update(meta.len().to_le_bytes());
            hasher.update(modified.to_le_bytes());
        }
        Ok(hex(&hasher.finalize()))
    }

    async fn fetch(&self) -> Result<ContentFiles, SourceError> {
        let mut files = BTreeMap::new();
        for (rel, path) in self.walk()? {
            let bytes = std::fs::read(&path).map_err(|e| io_error(&path, e))?;
            let text = String::from_utf8(bytes).map_err(|_| SourceError::Io {
                path: rel.clone(),
                message: "not UTF-8 text".into(),
            })?;
            files.insert(rel, text);
        }
        Ok(ContentFiles::new(files))
    }

    fn describe(&self) -> String {
        self.root.display().to_string()
    }
}
