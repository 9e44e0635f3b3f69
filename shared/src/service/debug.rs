//! The policy trace a staff member sees in the web page's debug drawer
//! (docs/architecture.md, "The web page"): off unless the server runs with
//! `debug.enabled`, and
//! then only for tokens in the staff group.

use super::Service;
use crate::content::Course;
use crate::model::{Principal, StudentSnapshot, TurnDebug, TutorPolicy, UnitTier};

impl Service {
    /// The trace of one turn for `who`, or `None` when they may not see it.
    pub(crate) fn turn_debug(
        &self,
        who: &Principal,
        trace: &serde_json::Value,
        policy: &TutorPolicy,
        snapshot: &StudentSnapshot,
        course: &Course,
    ) -> Option<TurnDebug> {
        if !(self.config.debug.enabled && who.staff) {
            return None;
        }
        let mut units: Vec<&String> = vec![&policy.focus_unit_id];
        for unit in &policy.scoped_unit_ids {
            if !units.contains(&unit) {
                units.push(unit);
            }
        }
        let unit_tiers = units
            .into_iter()
            .filter_map(|id| {
                let unit = course.unit(id)?;
                Some(UnitTier {
                    unit_id: unit.id.clone(),
                    title: unit.title.clone(),
                    mastery_tier: snapshot
                        .unit_progress
                        .get(id)
                        .map(|p| p.mastery_tier)
                        .unwrap_or_default(),
                })
            })
            .collect();
        Some(TurnDebug {
            trace: trace.clone(),
            unit_tiers,
        })
    }
}
