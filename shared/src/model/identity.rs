//! Who a request acts for: a student, known by the id the store keys their
//! state by. The api establishes it (from a token, or from a signed
//! integration request); the use cases only read it.

/// An authenticated student.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub student_id: String,
    /// Member of the configured staff group: may see debug traces.
    pub staff: bool,
}

/// Where the students of webhook integrations live (see
/// [`Principal::integration_student`]); no token's subject may start with it.
pub const INTEGRATION_NAMESPACE: &str = "integration:";

impl Principal {
    /// A student an integration acts for: namespaced by the integration, so
    /// neither a token's subject nor another integration can reach its threads.
    pub fn integration_student(integration_id: &str, student_id: &str) -> Principal {
        Principal {
            student_id: format!("{INTEGRATION_NAMESPACE}{integration_id}/{student_id}"),
            staff: false,
        }
    }
}

/// The integration and its own id for a student an integration acts for.
pub fn integration_student(student_id: &str) -> Option<(&str, &str)> {
    student_id
        .strip_prefix(INTEGRATION_NAMESPACE)?
        .split_once('/')
}
