//! Checks of the courses: each course's unit graph (listed, connected,
//! without cycles), its units (content, mistake tags, study plan, exam
//! questions) and its problem sets.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::{Checker, is_slug};
use crate::content::course::{CourseFile, ExamItem, Unit};
use crate::content::read::{Doc, Parsed};
use crate::content::workflow::BktParams;
use crate::content::yaml_index::YamlPath;
use crate::model::AuthoredStep;

impl Checker<'_> {
    /// `blueprints` is `None` when some blueprint file could not be read at
    /// all, so references to blueprints cannot be checked.
    pub(super) fn check_courses(
        &mut self,
        parsed: &Parsed,
        workflows: &BTreeSet<&str>,
        blueprints: Option<&BTreeSet<String>>,
    ) {
        let course_dirs: BTreeSet<&str> = parsed
            .courses
            .iter()
            .map(|(d, _)| d.as_str())
            .chain(parsed.broken.course_dirs.iter().map(String::as_str))
            .collect();
        for (dir, stem, unit) in &parsed.units {
            if !course_dirs.contains(dir.as_str()) {
                self.error(
                    &unit.path,
                    1,
                    1,
                    format!("unit file has no workflows/courses/{dir}/course.yaml"),
                );
            } else if unit.value.id != *stem {
                self.at(
                    unit,
                    &YamlPath::root().key("id"),
                    format!(
                        "unit id `{}` must match its file name `{stem}`",
                        unit.value.id
                    ),
                );
            }
        }
        for (dir, doc) in &parsed.courses {
            let units: Vec<&Doc<Unit>> = parsed
                .units
                .iter()
                .filter(|(d, stem, u)| d == dir && u.value.id == *stem)
                .map(|(_, _, u)| u)
                .collect();
            let broken_units: BTreeSet<&str> = parsed
                .broken
                .units
                .iter()
                .filter(|(d, _)| d == dir)
                .map(|(_, stem)| stem.as_str())
                .collect();
            let workflow_bkt = parsed
                .workflows
                .iter()
                .find(|w| w.value.id == doc.value.workflow)
                .map(|w| &w.value.mastery.bkt);
            self.check_course(dir, doc, &units, &broken_units, workflows, blueprints);
            for unit in &units {
                self.check_unit_bkt(unit, workflow_bkt);
            }
        }
    }

    fn check_course(
        &mut self,
        dir: &str,
        doc: &Doc<CourseFile>,
        units: &[&Doc<Unit>],
        broken_units: &BTreeSet<&str>,
        workflows: &BTreeSet<&str>,
        blueprints: Option<&BTreeSet<String>>,
    ) {
        let c = &doc.value;
        let root = YamlPath::root();
        if c.id != dir {
            self.at(
                doc,
                &root.key("id"),
                format!("course id `{}` must match its directory `{dir}`", c.id),
            );
        }
        if !workflows.contains(c.workflow.as_str()) {
            self.at(
                doc,
                &root.key("workflow"),
                format!(
                    "workflow `{}` does not exist (workflows/{}.yaml)",
                    c.workflow, c.workflow
                ),
            );
        }
        let listed = self.check_unit_list(dir, doc, units, broken_units);
        match listed.get(c.entry_unit.as_str()) {
            None => self.at(
                doc,
                &root.key("entry_unit"),
                format!("entry unit `{}` is not a unit of this course", c.entry_unit),
            ),
            Some(&i) => {
                if !c.units[i].requires.is_empty() {
                    self.at(
                        doc,
                        &root.key("entry_unit"),
                        format!("entry unit `{}` must not require other units", c.entry_unit),
                    );
                }
                self.check_connected(doc, &listed);
            }
        }
        self.check_acyclic(doc, &listed);
        let mut question_ids: BTreeMap<&str, &str> = BTreeMap::new();
        for unit in units {
            self.check_unit(unit, blueprints, &mut question_ids);
            self.check_prerequisite_checks(unit, c);
        }
        self.check_problem_sets(doc, &listed);
    }

    /// The course's list of units: each listed once, with a file, and
    /// requiring other listed units; and every unit file listed. Returns
    /// the listed units with their positions in the list.
    fn check_unit_list<'d>(
        &mut self,
        dir: &str,
        doc: &'d Doc<CourseFile>,
        units: &[&Doc<Unit>],
        broken_units: &BTreeSet<&str>,
    ) -> BTreeMap<&'d str, usize> {
        let c = &doc.value;
        let nodes = YamlPath::root().key("units");
        let mut listed: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, node) in c.units.iter().enumerate() {
            if listed.insert(node.id.as_str(), i).is_some() {
                self.at(
                    doc,
                    &nodes.index(i).key("id"),
                    format!("unit `{}` is listed twice", node.id),
                );
            }
        }
        let files: BTreeMap<&str, &Doc<Unit>> =
            units.iter().map(|u| (u.value.id.as_str(), *u)).collect();
        for (i, node) in c.units.iter().enumerate() {
            let at = nodes.index(i);
            if !files.contains_key(node.id.as_str()) && !broken_units.contains(node.id.as_str()) {
                self.at(
                    doc,
                    &at.key("id"),
                    format!(
                        "unit `{}` has no file workflows/courses/{dir}/units/{}.yaml",
                        node.id, node.id
                    ),
                );
            }
            let mut seen = BTreeSet::new();
            for (j, req) in node.requires.iter().enumerate() {
                let req_at = at.key("requires").index(j);
                if req == &node.id {
                    self.at(doc, &req_at, format!("unit `{}` requires itself", node.id));
                } else if !listed.contains_key(req.as_str()) {
                    self.at(
                        doc,
                        &req_at,
                        format!(
                            "prerequisite `{req}` of unit `{}` is not a unit of this course",
                            node.id
                        ),
                    );
                } else if !seen.insert(req.as_str()) {
                    self.at(
                        doc,
                        &req_at,
                        format!("prerequisite `{req}` is listed twice"),
                    );
                }
            }
        }
        for unit in units {
            if !listed.contains_key(unit.value.id.as_str()) {
                self.error(
                    &unit.path,
                    1,
                    1,
                    format!(
                        "unit `{}` is not listed under units: in workflows/courses/{dir}/course.yaml",
                        unit.value.id
                    ),
                );
            }
        }
        listed
    }

    /// Problem set ids unique, and each problem of a listed unit, with an
    /// answer its steps lead up to.
    fn check_problem_sets(&mut self, doc: &Doc<CourseFile>, listed: &BTreeMap<&str, usize>) {
        let c = &doc.value;
        let root = YamlPath::root();
        let sets = root.key("problem_sets");
        let mut set_ids = BTreeSet::new();
        for (i, set) in c.problem_sets.iter().enumerate() {
            let at = sets.index(i);
            if !set_ids.insert(set.id.as_str()) {
                self.at(
                    doc,
                    &at.key("id"),
                    format!("problem set `{}` is defined twice", set.id),
                );
            }
            if set.problems.is_empty() {
                self.at_key(
                    doc,
                    &at.key("problems"),
                    "a problem set needs at least one problem",
                );
            }
            let mut ids = BTreeSet::new();
            for (j, problem) in set.problems.iter().enumerate() {
                let p_at = at.key("problems").index(j);
                if !ids.insert(problem.id.as_str()) {
                    self.at(
                        doc,
                        &p_at.key("id"),
                        format!("problem `{}` appears twice", problem.id),
                    );
                }
                if !listed.contains_key(problem.unit.as_str()) {
                    self.at(
                        doc,
                        &p_at.key("unit"),
                        format!("unit `{}` is not a unit of this course", problem.unit),
                    );
                }
                if problem.answer.trim().is_empty() {
                    self.at(doc, &p_at.key("answer"), "answer is empty");
                } else {
                    self.check_authored_steps(doc, &p_at, &problem.steps, &problem.answer);
                }
            }
        }
    }

    /// Every unit must be reachable from the entry unit along prerequisite
    /// edges in either direction: a unit off on its own is never taught.
    fn check_connected(&mut self, doc: &Doc<CourseFile>, listed: &BTreeMap<&str, usize>) {
        let c = &doc.value;
        let mut neighbours: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for node in &c.units {
            for req in &node.requires {
                if listed.contains_key(req.as_str()) {
                    neighbours.entry(node.id.as_str()).or_default().push(req);
                    neighbours.entry(req.as_str()).or_default().push(&node.id);
                }
            }
        }
        let mut reached: HashSet<&str> = HashSet::from([c.entry_unit.as_str()]);
        let mut stack = vec![c.entry_unit.as_str()];
        while let Some(u) = stack.pop() {
            for &n in neighbours.get(u).map_or(&[][..], Vec::as_slice) {
                if reached.insert(n) {
                    stack.push(n);
                }
            }
        }
        for (i, node) in c.units.iter().enumerate() {
            if !reached.contains(node.id.as_str()) {
                self.at(
                    doc,
                    &YamlPath::root().key("units").index(i).key("id"),
                    format!(
                        "unit `{}` is not connected to the entry unit `{}`",
                        node.id, c.entry_unit
                    ),
                );
            }
        }
    }

    /// Reports each prerequisite cycle once, at the edge that closes it.
    fn check_acyclic(&mut self, doc: &Doc<CourseFile>, listed: &BTreeMap<&str, usize>) {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Active,
            Done,
        }
        let c = &doc.value;
        let mut marks = vec![Mark::New; c.units.len()];
        let mut reported: BTreeSet<Vec<&str>> = BTreeSet::new();
        for start in 0..c.units.len() {
            if marks[start] != Mark::New {
                continue;
            }
            // Iterative DFS: (unit index, next requirement to follow).
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            marks[start] = Mark::Active;
            while let Some(&mut (u, ref mut next)) = stack.last_mut() {
                let reqs = &c.units[u].requires;
                if *next >= reqs.len() {
                    marks[u] = Mark::Done;
                    stack.pop();
                    continue;
                }
                let j = *next;
                *next += 1;
                let Some(&v) = listed.get(reqs[j].as_str()) else {
                    continue;
                };
                match marks[v] {
                    Mark::New => {
                        marks[v] = Mark::Active;
                        stack.push((v, 0));
                    }
                    Mark::Active if v != u => {
                        let from = stack.iter().position(|&(w, _)| w == v).unwrap_or(0);
                        let mut cycle: Vec<&str> = stack[from..]
                            .iter()
                            .map(|&(w, _)| c.units[w].id.as_str())
                            .collect();
                        let mut key = cycle.clone();
                        key.sort_unstable();
                        if reported.insert(key) {
                            cycle.push(c.units[v].id.as_str());
                            self.at(
                                doc,
                                &YamlPath::root()
                                    .key("units")
                                    .index(u)
                                    .key("requires")
                                    .index(j),
                                format!("prerequisite cycle: {}", cycle.join(" requires ")),
                            );
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    fn check_unit<'a>(
        &mut self,
        doc: &'a Doc<Unit>,
        blueprints: Option<&BTreeSet<String>>,
        question_ids: &mut BTreeMap<&'a str, &'a str>,
    ) {
        let u = &doc.value;
        let root = YamlPath::root();
        for (key, value) in [("title", &u.title), ("anchor", &u.anchor)] {
            if value.trim().is_empty() {
                self.at(doc, &root.key(key), format!("{key} is empty"));
            }
        }
        if u.key_ideas.is_empty() {
            self.at_key(
                doc,
                &root.key("key_ideas"),
                "a unit needs at least one key idea",
            );
        }
        if u.chunks.is_empty() {
            self.at_key(
                doc,
                &root.key("chunks"),
                "a unit needs at least one content chunk",
            );
        }
        let mut chunk_ids = BTreeSet::new();
        for (i, chunk) in u.chunks.iter().enumerate() {
            let at = root.key("chunks").index(i);
            if !chunk_ids.insert(chunk.id.as_str()) {
                self.at(
                    doc,
                    &at.key("id"),
                    format!("chunk `{}` appears twice", chunk.id),
                );
            }
            if chunk.text.trim().is_empty() {
                self.at(doc, &at.key("text"), "chunk text is empty");
            }
        }
        let mut ids = BTreeSet::new();
        for (i, m) in u.misconceptions.iter().enumerate() {
            if !ids.insert(m.id.as_str()) {
                self.at(
                    doc,
                    &root.key("misconceptions").index(i).key("id"),
                    format!("misconception `{}` appears twice", m.id),
                );
            }
        }
        self.check_mistake_tags(doc);
        for (i, bp) in u.blueprints.iter().enumerate() {
            if blueprints.is_some_and(|known| !known.contains(bp)) {
                self.at(
                    doc,
                    &root.key("blueprints").index(i),
                    format!("blueprint `{bp}` does not exist in workflows/blueprints/"),
                );
            }
        }
        if let Some(plan) = &u.study_plan {
            self.check_plan_texts(doc, &root.key("study_plan"), plan);
            if let Some(finding) = self.engine.study_plan(plan, u, &root.key("study_plan")) {
                self.report(doc, finding);
            }
        }
        for (i, q) in u.exam.iter().enumerate() {
            self.check_exam_item(doc, &root.key("exam").index(i), q, question_ids);
        }
    }

    /// Mistake tags: unique slugs, each explained in a sentence or two.
    fn check_mistake_tags(&mut self, doc: &Doc<Unit>) {
        let u = &doc.value;
        let root = YamlPath::root();
        let mut tags = BTreeSet::new();
        for (i, t) in u.mistake_tags.iter().enumerate() {
            let at = root.key("mistake_tags").index(i).key("id");
            if !is_slug(&t.id) {
                self.at(
                    doc,
                    &at,
                    format!(
                        "mistake tag `{}` must be lowercase letters, digits and _",
                        t.id
                    ),
                );
            } else if !tags.insert(t.id.as_str()) {
                self.at(doc, &at, format!("mistake tag `{}` appears twice", t.id));
            }
            let entry = root.key("mistake_tags").index(i);
            let explain = t.explain.trim();
            if explain.is_empty() {
                self.at(
                    doc,
                    &entry,
                    format!(
                        "mistake tag `{}` needs an `explain`: what the tutor tells a student \
                         who made this mistake",
                        t.id
                    ),
                );
            } else if explain.chars().count() > MAX_EXPLAIN_CHARS {
                self.at(
                    doc,
                    &entry.key("explain"),
                    format!(
                        "explain is {} characters; keep it to {MAX_EXPLAIN_CHARS}, a sentence \
                         or two a student reads in the chat",
                        explain.chars().count()
                    ),
                );
            }
        }
    }

    /// An authored plan's words go into the tutor prompt as they are: a
    /// `{{placeholder}}` in them is never filled, so it is an error where
    /// it stands.
    fn check_plan_texts(&mut self, doc: &Doc<Unit>, at: &YamlPath, plan: &[AuthoredStep]) {
        for (i, step) in plan.iter().enumerate() {
            let fields = [
                ("title", Some(&step.title)),
                ("concept", Some(&step.concept)),
                ("success_criteria", step.success_criteria.as_ref()),
            ];
            for (field, text) in fields {
                let Some(text) = text else { continue };
                let Some(start) = text.find("{{") else {
                    continue;
                };
                let end = text[start..]
                    .find("}}")
                    .map_or(text.len(), |e| start + e + 2);
                let written = &text[start..end];
                let field_at = at.index(i).key(field);
                let pos = doc.index.locate_within(&field_at, written);
                self.error(
                    &doc.path,
                    pos.line,
                    pos.column,
                    format!(
                        "`{written}` is never filled in a study plan's {field}: write the words themselves"
                    ),
                );
            }
        }
    }

    /// Each mistake tag a unit maps to a prerequisite check is one of its
    /// own tags, and the unit it points to is one the unit depends on.
    fn check_prerequisite_checks(&mut self, doc: &Doc<Unit>, course: &CourseFile) {
        let u = &doc.value;
        if u.prerequisite_checks.is_empty() {
            return;
        }
        let requires: BTreeMap<&str, &[String]> = course
            .units
            .iter()
            .map(|n| (n.id.as_str(), n.requires.as_slice()))
            .collect();
        let mut below: BTreeSet<&str> = BTreeSet::new();
        let mut stack: Vec<&str> = vec![u.id.as_str()];
        while let Some(next) = stack.pop() {
            for p in requires.get(next).copied().unwrap_or_default() {
                if below.insert(p.as_str()) {
                    stack.push(p.as_str());
                }
            }
        }
        // With a prerequisite missing from the graph (reported already),
        // what a unit depends on is not known. A check naming a unit this
        // course does not have is never raised, so it is not an error.
        let graph_whole = requires
            .values()
            .all(|r| r.iter().all(|p| requires.contains_key(p.as_str())));
        let root = YamlPath::root().key("prerequisite_checks");
        for (tag, prereq) in &u.prerequisite_checks {
            let at = root.key(tag);
            if !u.mistake_tags.iter().any(|t| t.id == *tag) {
                self.at_key(
                    doc,
                    &at,
                    format!("`{tag}` is not one of this unit's mistake_tags"),
                );
            } else if graph_whole
                && requires.contains_key(prereq.as_str())
                && !below.contains(prereq.as_str())
            {
                self.at(
                    doc,
                    &at,
                    format!(
                        "`{prereq}` is not a unit `{}` depends on, so it cannot be checked as its prerequisite",
                        u.id
                    ),
                );
            }
        }
    }

    /// A unit's BKT overrides: probabilities, and with the workflow's values
    /// for what is not overridden, guess + slip below 1. `workflow` is `None`
    /// when the course's workflow did not load (already reported).
    fn check_unit_bkt(&mut self, doc: &Doc<Unit>, workflow: Option<&BktParams>) {
        let Some(o) = &doc.value.bkt else {
            return;
        };
        let at = YamlPath::root().key("bkt");
        for (key, value) in [
            ("prior", o.prior),
            ("learn", o.learn),
            ("guess", o.guess),
            ("slip", o.slip),
            ("mastered_at", o.mastered_at),
        ] {
            if let Some(v) = value
                && !(0.0..=1.0).contains(&v)
            {
                self.at(doc, &at.key(key), format!("{v} is outside [0, 1]"));
            }
        }
        if let Some(workflow) = workflow {
            let resolved = workflow.overridden_by(Some(o));
            if (o.guess.is_some() || o.slip.is_some()) && resolved.guess + resolved.slip >= 1.0 {
                self.at_key(
                    doc,
                    &at,
                    format!(
                        "guess + slip must be below 1 (here {} + {}), or a right answer would be \
                         evidence of not knowing",
                        resolved.guess, resolved.slip
                    ),
                );
            }
        }
    }

    fn check_exam_item<'a>(
        &mut self,
        doc: &'a Doc<Unit>,
        at: &YamlPath,
        q: &'a ExamItem,
        question_ids: &mut BTreeMap<&'a str, &'a str>,
    ) {
        if let Some(other) = question_ids.insert(q.id.as_str(), doc.path.as_str()) {
            self.at(
                doc,
                &at.key("id"),
                format!("exam question `{}` is also defined in {other}", q.id),
            );
        }
        if q.stem.trim().is_empty() {
            self.at(doc, &at.key("stem"), "stem is empty");
        }
        if q.is_written() {
            self.check_written_item(doc, at, q);
        } else {
            self.check_choice_item(doc, at, q);
        }
        if q.memo.trim().is_empty() {
            self.at(
                doc,
                &at.key("memo"),
                "memo is empty: students who view it need the worked solution",
            );
        }
        if let Some(url) = &q.video_url
            && !url.starts_with("https://")
        {
            self.at(
                doc,
                &at.key("video_url"),
                "video_url must be an https:// address",
            );
        }
    }

    /// A written question is marked against its rubric (by the evaluation
    /// call, or offline by the rubric's terms): it needs a model answer and
    /// points that each name the words that show them.
    fn check_written_item(&mut self, doc: &Doc<Unit>, at: &YamlPath, q: &ExamItem) {
        if !q.options.is_empty() {
            self.at_key(
                doc,
                &at.key("options"),
                "a written question has no options (leave out `format: written` for a choice)",
            );
        }
        if q.answer.trim().is_empty() {
            self.at(
                doc,
                &at.key("answer"),
                "a written question needs a model answer",
            );
        }
        if q.rubric.is_empty() {
            self.at(
                doc,
                at,
                format!(
                    "written question `{}` has no rubric: list the points an answer must make, \
                     each with the terms that show it",
                    q.id
                ),
            );
        }
        for (i, p) in q.rubric.iter().enumerate() {
            let here = at.key("rubric").index(i);
            if p.point.trim().is_empty() {
                self.at(doc, &here.key("point"), "rubric point is empty");
            }
            if p.terms.iter().all(|t| t.trim().is_empty()) {
                self.at_key(
                    doc,
                    &here.key("terms"),
                    "a rubric point needs at least one term that shows it was made",
                );
            }
        }
        if !q.steps.is_empty() {
            self.at_key(
                doc,
                &at.key("steps"),
                "a written question has no hint steps: it is asked only in exams",
            );
        }
        // The model answer is what a full answer looks like: the offline
        // judge must find every point in it, or its terms are wrong.
        let points_made = self.engine.points_made(q);
        for i in 0..q.rubric.len() {
            if !q.answer.trim().is_empty() && !points_made.contains(&i) {
                self.at(
                    doc,
                    &at.key("rubric").index(i).key("terms"),
                    "the model answer does not make this point: none of its terms is in `answer`",
                );
            }
        }
    }

    fn check_choice_item(&mut self, doc: &Doc<Unit>, at: &YamlPath, q: &ExamItem) {
        if !q.rubric.is_empty() {
            self.at_key(
                doc,
                &at.key("rubric"),
                "only a written question has a rubric (add `format: written`)",
            );
        }
        if !(2..=26).contains(&q.options.len()) {
            self.at_key(
                doc,
                &at.key("options"),
                "an exam question needs 2 to 26 options",
            );
        }
        let mut seen = BTreeSet::new();
        for (i, option) in q.options.iter().enumerate() {
            let normalized = option.trim().to_lowercase();
            if normalized.is_empty() {
                self.at(doc, &at.key("options").index(i), "option is empty");
            } else if !seen.insert(normalized) {
                self.at(
                    doc,
                    &at.key("options").index(i),
                    format!("option `{option}` appears twice"),
                );
            }
        }
        if let Some(i) = q.option_index(&q.answer) {
            self.check_authored_steps(doc, at, &q.steps, &q.options[i]);
        } else {
            let ids: Vec<String> = (0..q.options.len()).map(ExamItem::option_id).collect();
            self.at(
                doc,
                &at.key("answer"),
                format!(
                    "answer `{}` is not an option id ({})",
                    q.answer,
                    ids.join(", ")
                ),
            );
        }
    }

    /// Authored steps lead up to the answer and never state it: a hint may
    /// show any of them while the question is pending.
    fn check_authored_steps<T>(
        &mut self,
        doc: &Doc<T>,
        at: &YamlPath,
        steps: &[String],
        answer: &str,
    ) {
        if steps.len() > AUTHORED_STEPS_MAX {
            self.at_key(
                doc,
                &at.key("steps"),
                format!(
                    "{} steps: a worked solution has at most {AUTHORED_STEPS_MAX}",
                    steps.len()
                ),
            );
        }
        for (i, step) in steps.iter().enumerate() {
            let step_at = at.key("steps").index(i);
            if step.trim().is_empty() {
                self.at(doc, &step_at, "step is empty");
            } else if crate::text::mentions(step, answer) {
                self.at(
                    doc,
                    &step_at,
                    format!(
                        "the step states the answer `{}`: steps lead up to the answer, which \
                         is only shown once the question is over",
                        answer.trim()
                    ),
                );
            }
        }
    }
}

/// Most authored steps an exam question or problem has.
const AUTHORED_STEPS_MAX: usize = 5;

/// Longest mistake explanation.
const MAX_EXPLAIN_CHARS: usize = 400;
