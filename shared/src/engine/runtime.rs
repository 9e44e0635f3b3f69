//! The per-course runtime: a course's content with what is derived from it
//! once per content version (search indexes, the safety gate's compiled
//! patterns, blueprint fingerprints), shared by every turn on the course.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::content::{Blueprint, Bundle, Course, Workflow};
use crate::engine::interpret::retrieve::CourseIndex;
use crate::engine::safety::{SafetyGate, Sanitizer};

/// A course's content with what is derived from it once per content
/// version: search indexes and compiled patterns.
pub struct CourseRuntime {
    pub bundle: Arc<Bundle>,
    course_id: String,
    pub index: CourseIndex,
    pub safety: SafetyGate,
    pub sanitizer: Sanitizer,
    /// The fingerprint each of the course's blueprints seals into its drill
    /// tokens: a digest of the whole blueprint, too dear to take every turn.
    blueprint_fingerprints: BTreeMap<String, [u8; 8]>,
}

impl CourseRuntime {
    /// `None` when the course or its workflow is not in the bundle.
    pub fn new(bundle: Arc<Bundle>, course_id: &str) -> Option<Self> {
        let course = bundle.course(course_id)?;
        let workflow = bundle.workflow_for(course)?;
        let mut index = CourseIndex::build(course);
        index
            .mapper
            .add_outside_topics(workflow.beyond_course.iter().map(|b| b.asks.as_slice()));
        let safety = SafetyGate::new(workflow);
        let sanitizer = Sanitizer::new(workflow);
        let blueprint_fingerprints = course
            .units
            .values()
            .flat_map(|u| &u.blueprints)
            .filter_map(|id| Some((id.clone(), bundle.blueprints.get(id)?.fingerprint())))
            .collect();
        Some(CourseRuntime {
            course_id: course_id.to_owned(),
            index,
            safety,
            sanitizer,
            blueprint_fingerprints,
            bundle,
        })
    }

    /// One of the course's blueprints and its fingerprint.
    pub fn blueprint(&self, id: &str) -> Option<(&Blueprint, [u8; 8])> {
        Some((
            self.bundle.blueprints.get(id)?,
            *self.blueprint_fingerprints.get(id)?,
        ))
    }

    pub fn course(&self) -> &Course {
        self.bundle
            .course(&self.course_id)
            .expect("checked when the runtime was built")
    }

    pub fn workflow(&self) -> &Workflow {
        self.bundle
            .workflow_for(self.course())
            .expect("checked when the runtime was built")
    }
}

/// The repository's own content bundle, for tests that run on
/// real content.
#[cfg(test)]
pub(crate) fn shipped_bundle() -> Bundle {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(crate::content::ContentSource::fetch(
            &crate::content::FsSource::new(root),
        ))
        .unwrap();
    Bundle::load(&files).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every blueprint of the course is fingerprinted once, with the
    /// runtime, and the turn's drills carry that fingerprint rather than
    /// digesting the blueprint again each turn.
    #[test]
    fn the_runtime_holds_every_course_blueprint_fingerprint() {
        let bundle = Arc::new(shipped_bundle());
        let rt = CourseRuntime::new(bundle.clone(), "prealgebra").unwrap();
        let ids: Vec<&String> = rt
            .course()
            .units
            .values()
            .flat_map(|u| &u.blueprints)
            .collect();
        assert!(!ids.is_empty());
        assert_eq!(rt.blueprint_fingerprints.len(), {
            let mut unique = ids.clone();
            unique.sort();
            unique.dedup();
            unique.len()
        });
        for id in ids {
            let (blueprint, fingerprint) = rt.blueprint(id).unwrap();
            assert_eq!(fingerprint, bundle.blueprints[id].fingerprint());
            assert_eq!(&blueprint.id, id);
        }
        assert!(rt.blueprint("NOT.A.BLUEPRINT").is_none());
    }
}
