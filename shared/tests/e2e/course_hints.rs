//! A request on a thread reads the student's state in the thread's course
//! alongside the thread, keyed on a course it knows beforehand: the one
//! the thread's id carries, or the one the request names. The thread has
//! the last word: a course that turns out not to be the thread's is never
//! built on, let alone written.

use crate::e2e_support;

use e2e_support::*;
use serde_json::json;

/// The repository's content with a second course beside pre-algebra.
fn two_courses(root: &std::path::Path) {
    let copy = |from: &std::path::Path, to: &std::path::Path| {
        for entry in walkdir(from) {
            let target = to.join(entry.strip_prefix(from).unwrap());
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(&entry, &target).unwrap();
        }
    };
    for dir in ["workflows", "prompts"] {
        copy(&repo_root().join(dir), &root.join(dir));
    }
    let courses = root.join("workflows/courses");
    copy(&courses.join("prealgebra"), &courses.join("second"));
    let course = courses.join("second/course.yaml");
    let text = std::fs::read_to_string(&course).unwrap();
    std::fs::write(&course, text.replacen("id: prealgebra", "id: second", 1)).unwrap();
}

fn walkdir(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walkdir(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[tokio::test]
async fn a_course_that_is_not_the_threads_is_never_built_on() {
    let dir = tempfile::tempdir().unwrap();
    let content = dir.path().join("content");
    two_courses(&content);
    let mut config = base_config(dir.path());
    config.content.dir = content;
    let h = Harness::start(config, dir, None).await;
    let student = "student-course-hints";

    let thread = h.new_thread(student).await;
    assert!(thread.starts_with("prealgebra."), "{thread}");
    h.turn(student, &thread, json!({"messageText": "what is a ratio?"}))
        .await;
    let before = h
        .store
        .get_snapshot(student, "prealgebra")
        .await
        .unwrap()
        .expect("a pre-algebra snapshot");

    // An id that names the other course (as no id drawn here does) for a
    // pre-algebra thread: the turn is the pre-algebra thread's.
    let misnamed = format!("second.{}", uuid::Uuid::new_v4());
    h.copy_thread(&thread, &misnamed).await;
    let reply = h
        .post(
            student,
            &format!("/threads/{misnamed}/turn"),
            json!({"messageText": "and what is a rate?"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let after = h
        .store
        .get_snapshot(student, "prealgebra")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.version, before.version + 1);
    assert!(
        h.store
            .get_snapshot(student, "second")
            .await
            .unwrap()
            .is_none()
    );

    // A request naming another course than its thread's is refused, as
    // before, whatever was read for it.
    let bare = uuid::Uuid::new_v4().to_string();
    h.copy_thread(&thread, &bare).await;
    for path in [&thread, &bare] {
        let refused = h
            .post(
                student,
                &format!("/threads/{path}/turn"),
                json!({"messageText": "hello", "courseId": "second"}),
            )
            .await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_eq!(refused.body["field"], "courseId", "{}", refused.body);
    }
    assert!(
        h.store
            .get_snapshot(student, "second")
            .await
            .unwrap()
            .is_none()
    );
    let unchanged = h
        .store
        .get_snapshot(student, "prealgebra")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(unchanged.version, after.version);
}
