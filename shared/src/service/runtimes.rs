//! The courses' runtimes (search indexes, compiled safety patterns), built
//! once per content version and shared by every request of the process.
//!
//! Building one takes a noticeable fraction of a second, mostly compiling
//! the safety patterns, so entrypoints build them before the first request
//! where they can: a Lambda function during its init phase, the local
//! server before it listens. Anything not built ahead is built on first use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::content::Bundle;
use crate::engine::runtime::CourseRuntime;

#[derive(Default)]
pub struct CourseRuntimes {
    /// The content version they were built for, and the runtime per course.
    built: Mutex<(String, HashMap<String, Arc<CourseRuntime>>)>,
}

impl CourseRuntimes {
    /// The runtime of `course_id` in `bundle`; `None` when the bundle has
    /// no such course.
    pub fn get(&self, bundle: &Arc<Bundle>, course_id: &str) -> Option<Arc<CourseRuntime>> {
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if built.0 != bundle.version {
            *built = (bundle.version.clone(), HashMap::new());
        }
        if let Some(rt) = built.1.get(course_id) {
            return Some(rt.clone());
        }
        let rt = Arc::new(CourseRuntime::new(bundle.clone(), course_id)?);
        built.1.insert(course_id.to_owned(), rt.clone());
        Some(rt)
    }

    /// Builds the runtime of every course in `bundle` (blocking: call it
    /// where blocking is fine).
    pub fn prepare(&self, bundle: &Arc<Bundle>) {
        for course_id in bundle.courses.keys() {
            drop(self.get(bundle, course_id));
        }
    }

    /// [`Self::prepare`] on a blocking thread.
    pub async fn prepare_in_background(self: &Arc<Self>, bundle: Arc<Bundle>) {
        let runtimes = self.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || runtimes.prepare(&bundle)).await {
            tracing::warn!(error = %e, "the course runtimes could not be built ahead");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_runtimes_are_the_ones_requests_get_until_the_content_changes() {
        let bundle = Arc::new(crate::engine::runtime::shipped_bundle());
        let runtimes = CourseRuntimes::default();
        runtimes.prepare(&bundle);
        let course_id = bundle.courses.keys().next().expect("a shipped course");
        let first = runtimes.get(&bundle, course_id).unwrap();
        assert!(Arc::ptr_eq(
            &first,
            &runtimes.get(&bundle, course_id).unwrap()
        ));
        assert!(runtimes.get(&bundle, "no-such-course").is_none());

        let mut changed = (*bundle).clone();
        changed.version.push_str("-next");
        let changed = Arc::new(changed);
        let rebuilt = runtimes.get(&changed, course_id).unwrap();
        assert!(!Arc::ptr_eq(&first, &rebuilt));
    }
}
