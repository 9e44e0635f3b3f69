//! Checks of the prompts the workflows name: each exists, uses only the
//! placeholders filled in for its role, and uses those its role requires.

use std::collections::BTreeMap;

use super::Checker;
use crate::content::prompt::{PromptRole, PromptTemplate};
use crate::content::read::Doc;
use crate::content::yaml_index::{LazyYamlIndex, Position, YamlPath};

/// A workflow's reference to a prompt, located only if it must be reported.
pub(super) struct PromptUse<'a> {
    pub(super) name: String,
    pub(super) role: PromptRole,
    pub(super) file: &'a str,
    pub(super) index: &'a LazyYamlIndex,
    pub(super) at: YamlPath,
}

impl<'a> PromptUse<'a> {
    /// `doc`'s use of prompt `name` (at `at`) in `role`.
    pub(super) fn of<T>(doc: &'a Doc<T>, name: &str, role: PromptRole, at: YamlPath) -> Self {
        PromptUse {
            name: name.to_owned(),
            role,
            file: &doc.path,
            index: &doc.index,
            at,
        }
    }

    fn position(&self) -> Position {
        self.index.locate(&self.at)
    }
}

impl Checker<'_> {
    pub(super) fn check_prompts(
        &mut self,
        prompts: &BTreeMap<String, (String, PromptTemplate)>,
        uses: &[PromptUse<'_>],
    ) {
        for u in uses {
            let Some((path, template)) = prompts.get(&u.name) else {
                let known: Vec<&str> = prompts.keys().map(String::as_str).collect();
                let position = u.position();
                self.error(
                    u.file,
                    position.line,
                    position.column,
                    format!(
                        "prompt `{}` does not exist (expected prompts/{}.txt; known: {})",
                        u.name,
                        u.name,
                        known.join(", ")
                    ),
                );
                continue;
            };
            let allowed = u.role.placeholders();
            for p in template.placeholders() {
                if !allowed.contains(&p.name.as_str()) {
                    self.error(
                        path,
                        p.line,
                        p.column,
                        format!(
                            "placeholder {{{{{}}}}} does not exist for a {} prompt (used by {}:{}); \
                             available: {}",
                            p.name,
                            u.role.name(),
                            u.file,
                            u.position().line,
                            allowed.join(", ")
                        ),
                    );
                }
            }
            for required in u.role.required() {
                if !template.uses(required) {
                    self.error(
                        path,
                        1,
                        1,
                        format!(
                            "a {} prompt must use {{{{{required}}}}} (used by {}:{})",
                            u.role.name(),
                            u.file,
                            u.position().line
                        ),
                    );
                }
            }
        }
    }
}
