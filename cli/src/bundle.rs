//! Loading a content bundle from disk for the commands that need one.

use std::path::Path;

use tutorflow::content::{Bundle, ContentFiles, ContentSource, FsSource, Workflow};

/// The files of the bundle under `dir`, unchecked; what stops them being
/// read is printed as an error.
pub async fn fetch(dir: &Path) -> Option<(FsSource, ContentFiles)> {
    let source = FsSource::new(dir);
    match source.fetch().await {
        Ok(files) => Some((source, files)),
        Err(e) => {
            eprintln!("error: {e}");
            None
        }
    }
}

/// The validated bundle under `dir`, or a message saying what is wrong.
pub async fn load(dir: &Path) -> Result<Bundle, String> {
    let source = FsSource::new(dir);
    let files = source.fetch().await.map_err(|e| e.to_string())?;
    Bundle::load(&files).map_err(|diagnostics| {
        let n = diagnostics.0.len();
        format!(
            "the content bundle in {} has {n} problem{} (run `tutorflow validate`)",
            source.describe(),
            if n == 1 { "" } else { "s" }
        )
    })
}

/// The workflow `name` of the bundle under `dir`.
pub async fn load_workflow(dir: &Path, name: &str) -> Result<Workflow, String> {
    let bundle = load(dir).await?;
    match bundle.workflows.get(name) {
        Some(workflow) => Ok(workflow.clone()),
        None => Err(format!(
            "no workflow `{name}` in {} (available: {})",
            dir.display(),
            bundle
                .workflows
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
