//! The content bundle: workflows, courses, blueprints and prompts, loaded
//! from a [`ContentSource`] and validated as a whole.

pub mod blueprint;
pub mod check;
pub mod course;
pub mod diagnostic;
pub mod load;
pub mod prompt;
mod read;
pub mod safety_examples;
pub mod source;
pub mod survey;
pub mod tutor_text;
pub mod workflow;
pub mod yaml_index;

pub use blueprint::Blueprint;
pub use check::{EngineChecks, Finding};
pub use course::{Course, ExamItem, ExamItemFormat, RubricPoint, Unit};
pub use diagnostic::{Diagnostic, Diagnostics};
pub use load::{Bundle, BundleSummary};
pub use prompt::{PromptRole, PromptTemplate};
pub use source::{ContentFiles, ContentSource, FsSource, SourceError};
pub use workflow::Workflow;
