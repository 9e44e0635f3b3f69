//! The report a problem-set session ends with, and its `session.completed`
//! notification.

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::model::{
    MasterySignal, OutboundEvent, OutboundEventKind, ProblemReportLine, ProblemSetReport,
    ProblemSetState, ProblemStatus, SessionEnd,
};

/// Ends the session: the report of what was done, kept in the state.
pub fn end_session(
    state: &mut ProblemSetState,
    end: SessionEnd,
    now: DateTime<Utc>,
    unit_title: impl Fn(&str) -> Option<String>,
) -> ProblemSetReport {
    state.ended = Some(end);
    state.current_index = state.current_index.min(state.problems.len() as u32);
    for p in &mut state.problems {
        if p.status == ProblemStatus::InProgress && p.progress.finished_at.is_none() {
            p.progress.finished_at = Some(now);
        }
    }
    let report = report(state, end, now, unit_title);
    state.report = Some(report.clone());
    report
}

/// The report a problem-set session ends with.
pub fn report(
    state: &ProblemSetState,
    end: SessionEnd,
    now: DateTime<Utc>,
    unit_title: impl Fn(&str) -> Option<String>,
) -> ProblemSetReport {
    let count = |signal: MasterySignal| {
        state
            .problems
            .iter()
            .filter(|p| p.progress.signal == Some(signal))
            .count() as u32
    };
    let lines: Vec<ProblemReportLine> = state
        .problems
        .iter()
        .map(|p| ProblemReportLine {
            problem_id: p.problem_id.clone(),
            text: p.text.clone(),
            status: p.status,
            signal: p.progress.signal,
            attempts: p.progress.attempts,
            hints_used: p.progress.hints_used,
            scaffold_depth: p.progress.scaffold_depth,
            taught_back: p.progress.taught_back,
            time_seconds: p.progress.started_at.map_or(0, |t| {
                (p.progress.finished_at.unwrap_or(now) - t)
                    .num_seconds()
                    .max(0) as u64
            }),
            categories: p.progress.categories.clone(),
        })
        .collect();
    let attempts: u32 = state.problems.iter().map(|p| p.progress.attempts).sum();
    let solved = state.problems.iter().filter(|p| p.progress.solved).count() as u32;
    let attempted = state
        .problems
        .iter()
        .filter(|p| p.status != ProblemStatus::Pending)
        .count() as u32;
    let mastered = count(MasterySignal::Mastered);
    let ratio = |a: u32, b: u32| {
        if b == 0 {
            0.0
        } else {
            (f64::from(a) / f64::from(b) * 1000.0).round() / 1000.0
        }
    };
    ProblemSetReport {
        ended: end,
        set_id: state.set_id.clone(),
        problems_total: state.problems.len() as u32,
        problems_completed: state
            .problems
            .iter()
            .filter(|p| matches!(p.status, ProblemStatus::Completed | ProblemStatus::Skipped))
            .count() as u32,
        mastered,
        learned: count(MasterySignal::Learned),
        struggling: count(MasterySignal::Struggling),
        stuck: count(MasterySignal::Stuck),
        skipped: state
            .problems
            .iter()
            .filter(|p| p.status == ProblemStatus::Skipped)
            .count() as u32,
        accuracy: ratio(solved, attempts),
        mastery_rate: ratio(mastered, attempted),
        time_on_task_seconds: lines.iter().map(|l| l.time_seconds).sum(),
        hints_used: state.problems.iter().map(|p| p.progress.hints_used).sum(),
        problems: lines,
        suggested_focus: focus(state, unit_title),
    }
}

/// What to practise next: the units (else the problems) that were skipped,
/// left unsolved or needed the most help, in the order met.
fn focus(state: &ProblemSetState, unit_title: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut focus: Vec<String> = Vec::new();
    let weak = state.problems.iter().filter(|p| {
        p.status == ProblemStatus::Skipped
            || (p.status != ProblemStatus::Pending && !p.progress.solved)
            || matches!(
                p.progress.signal,
                Some(MasterySignal::Struggling | MasterySignal::Stuck)
            )
    });
    for (n, p) in weak.enumerate() {
        let item = p
            .unit_id
            .as_deref()
            .and_then(&unit_title)
            .unwrap_or_else(|| format!("problems like \"{}\"", p.text));
        if !focus.contains(&item) && n < 8 {
            focus.push(item);
        }
    }
    focus
}

/// The `session.completed` notification.
pub fn session_completed(report: &ProblemSetReport) -> OutboundEvent {
    OutboundEvent {
        kind: OutboundEventKind::SessionCompleted,
        data: json!({ "report": report }),
    }
}
