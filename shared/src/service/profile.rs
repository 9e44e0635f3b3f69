//! The student's profile: checked here whether it comes with a new thread
//! or with `PUT /me/profile`, so both refuse the same things the same way.

use super::error::ServiceError;
use super::idempotency::Idempotency;
use super::text_hygiene;
use super::threads::commit_with_retries;
use super::{Output, Service};
use crate::model::{CreateThreadRequest, Personalization, Principal, StudentProfile};
use crate::store::{SavedProfile, UnitOfWork, WriteCondition};

/// Longest name kept, in characters.
pub const NAME_CHARS: usize = 40;
/// Longest `aboutMe`, in characters.
pub const ABOUT_ME_CHARS: usize = 300;
/// Most example themes a student picks: more would say nothing.
pub const MAX_THEMES: usize = 3;
pub const AGES: std::ops::RangeInclusive<u32> = 8..=18;
pub const GRADES: std::ops::RangeInclusive<u32> = 1..=12;

/// `profile` checked, trimmed, as a thread keeps it. `prefix` is where the
/// profile sits in the request body (`student.` in `POST /threads`), so a
/// problem names the field as the caller wrote it.
pub fn personalization(
    profile: &StudentProfile,
    prefix: &str,
) -> Result<Personalization, ServiceError> {
    let field = |name: &str| format!("{prefix}{name}");
    let name = match &profile.name {
        None => None,
        Some(name) => {
            let at = field("name");
            text_hygiene::check(&at, name)?;
            let name = name.trim();
            if name.is_empty() || name.chars().count() > NAME_CHARS {
                return Err(ServiceError::invalid_field(
                    &at,
                    format!("a name is 1 to {NAME_CHARS} characters"),
                ));
            }
            if name.contains(['\n', '\r', '\t']) {
                return Err(ServiceError::invalid_field(
                    &at,
                    "a name is one line, without tabs",
                ));
            }
            Some(name.to_owned())
        }
    };
    if let Some(age) = profile.age.filter(|a| !AGES.contains(a)) {
        return Err(ServiceError::invalid_field(
            &field("age"),
            format!("age {age} is outside {} to {}", AGES.start(), AGES.end()),
        ));
    }
    if let Some(grade) = profile.grade.filter(|g| !GRADES.contains(g)) {
        return Err(ServiceError::invalid_field(
            &field("grade"),
            format!(
                "grade {grade} is outside {} to {}",
                GRADES.start(),
                GRADES.end()
            ),
        ));
    }
    let themes = &profile.example_themes;
    if themes.len() > MAX_THEMES {
        return Err(ServiceError::invalid_field(
            &field("exampleThemes"),
            format!(
                "pick at most {MAX_THEMES} themes; {} were sent",
                themes.len()
            ),
        ));
    }
    if let Some((i, twice)) = themes
        .iter()
        .enumerate()
        .find(|(i, t)| themes[..*i].contains(t))
    {
        return Err(ServiceError::invalid_field(
            &field(&format!("exampleThemes[{i}]")),
            format!("theme `{}` is listed twice", twice.as_str()),
        ));
    }
    let about_me = match &profile.about_me {
        None => None,
        Some(about) => {
            let at = field("aboutMe");
            text_hygiene::check(&at, about)?;
            if about.chars().count() > ABOUT_ME_CHARS {
                return Err(ServiceError::invalid_field(
                    &at,
                    format!("aboutMe is at most {ABOUT_ME_CHARS} characters"),
                ));
            }
            Some(about.trim().to_owned()).filter(|a| !a.is_empty())
        }
    };
    Ok(Personalization {
        student_name: name,
        age: profile.age,
        grade: profile.grade,
        about_me,
        preferred_examples: themes.clone(),
        language_level: profile.language_level.unwrap_or_default(),
        language: profile.language.unwrap_or_default(),
    })
}

/// `profile` as it is kept: names and notes trimmed, blank notes dropped.
fn cleaned(profile: &StudentProfile, checked: &Personalization) -> StudentProfile {
    StudentProfile {
        name: checked.student_name.clone(),
        about_me: checked.about_me.clone(),
        ..profile.clone()
    }
}

impl Service {
    /// `GET /me/profile`: what the student saved, `{}` before they save anything.
    pub async fn get_profile(&self, who: &Principal) -> Result<Output, ServiceError> {
        let saved = self.store.get_profile(&who.student_id).await?;
        Output::json(200, &saved.map(|v| v.value.profile).unwrap_or_default())
    }

    /// `PUT /me/profile`: replaces the whole profile. Threads already
    /// started keep the profile they were created with.
    pub async fn put_profile(
        &self,
        who: &Principal,
        profile: StudentProfile,
        idempotency: &Idempotency,
    ) -> Result<Output, ServiceError> {
        let checked = personalization(&profile, "")?;
        let kept = cleaned(&profile, &checked);
        commit_with_retries(self, |_| async {
            let current = self.store.get_profile(&who.student_id).await?;
            let expected =
                current.map_or(WriteCondition::New, |v| WriteCondition::Version(v.version));
            let mut work = UnitOfWork::new();
            work.put_profile(
                SavedProfile {
                    student_id: who.student_id.clone(),
                    profile: kept.clone(),
                    updated_at: self.clock.now(),
                },
                expected,
            );
            let output = idempotency.respond(&mut work, 200, &kept)?;
            Ok((work, output))
        })
        .await
    }

    /// A new thread's personalization: the request's `student`, each field
    /// it leaves out taken from the saved profile. The request's own fields
    /// are checked first, so a problem names the field as it was sent.
    pub(crate) async fn thread_personalization(
        &self,
        who: &Principal,
        request: &CreateThreadRequest,
    ) -> Result<Personalization, ServiceError> {
        let sent = request.student.clone().unwrap_or_default();
        personalization(&sent, "student.")?;
        let saved = self.store.get_profile(&who.student_id).await?;
        match saved {
            None => personalization(&sent, "student."),
            Some(saved) => personalization(&sent.or(&saved.value.profile), "student."),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ExampleTheme, LanguageLevel, TutorLanguage};

    fn refused(profile: StudentProfile) -> (String, String) {
        // A refused field, which the api answers with 400 (see api::failure).
        let ServiceError::InvalidField { field, detail } =
            personalization(&profile, "student.").unwrap_err()
        else {
            panic!("a refused field")
        };
        (field, detail)
    }

    #[test]
    fn a_full_profile_is_kept_trimmed() {
        let p = personalization(
            &StudentProfile {
                name: Some("  Lucía ".into()),
                age: Some(13),
                grade: Some(8),
                language_level: Some(LanguageLevel::Simple),
                example_themes: vec![ExampleTheme::Sports, ExampleTheme::Money],
                language: Some(TutorLanguage::Es),
                about_me: Some(" I like football \n".into()),
            },
            "",
        )
        .unwrap();
        assert_eq!(p.student_name.as_deref(), Some("Lucía"));
        assert_eq!(p.about_me.as_deref(), Some("I like football"));
        assert_eq!(p.language, TutorLanguage::Es);
        assert_eq!(p.language_level, LanguageLevel::Simple);
        assert_eq!(p.preferred_examples.len(), 2);
    }

    #[test]
    fn an_empty_profile_is_the_default() {
        let p = personalization(&StudentProfile::default(), "").unwrap();
        assert!(p.is_default());
    }

    #[test]
    fn each_bad_field_is_named() {
        let cases = [
            (
                StudentProfile {
                    name: Some("   ".into()),
                    ..Default::default()
                },
                "student.name",
            ),
            (
                StudentProfile {
                    name: Some("x".repeat(41)),
                    ..Default::default()
                },
                "student.name",
            ),
            (
                StudentProfile {
                    name: Some("Ana\nBob".into()),
                    ..Default::default()
                },
                "student.name",
            ),
            (
                StudentProfile {
                    name: Some("A\u{202e}na".into()),
                    ..Default::default()
                },
                "student.name",
            ),
            (
                StudentProfile {
                    age: Some(7),
                    ..Default::default()
                },
                "student.age",
            ),
            (
                StudentProfile {
                    age: Some(19),
                    ..Default::default()
                },
                "student.age",
            ),
            (
                StudentProfile {
                    grade: Some(0),
                    ..Default::default()
                },
                "student.grade",
            ),
            (
                StudentProfile {
                    grade: Some(13),
                    ..Default::default()
                },
                "student.grade",
            ),
            (
                StudentProfile {
                    example_themes: vec![
                        ExampleTheme::Sports,
                        ExampleTheme::Games,
                        ExampleTheme::Money,
                        ExampleTheme::Art,
                    ],
                    ..Default::default()
                },
                "student.exampleThemes",
            ),
            (
                StudentProfile {
                    example_themes: vec![ExampleTheme::Games, ExampleTheme::Games],
                    ..Default::default()
                },
                "student.exampleThemes[1]",
            ),
            (
                StudentProfile {
                    about_me: Some("a".repeat(301)),
                    ..Default::default()
                },
                "student.aboutMe",
            ),
            (
                StudentProfile {
                    about_me: Some("a\u{0}b".into()),
                    ..Default::default()
                },
                "student.aboutMe",
            ),
        ];
        for (profile, field) in cases {
            let (named, detail) = refused(profile.clone());
            assert_eq!(named, field, "{profile:?}: {detail}");
        }
    }

    #[test]
    fn limits_themselves_are_accepted() {
        for profile in [
            StudentProfile {
                name: Some("x".repeat(40)),
                ..Default::default()
            },
            StudentProfile {
                age: Some(8),
                grade: Some(12),
                ..Default::default()
            },
            StudentProfile {
                age: Some(18),
                grade: Some(1),
                ..Default::default()
            },
            StudentProfile {
                about_me: Some("a".repeat(300)),
                ..Default::default()
            },
        ] {
            assert!(personalization(&profile, "").is_ok(), "{profile:?}");
        }
    }

    #[test]
    fn a_thread_request_falls_back_to_the_saved_profile_field_by_field() {
        let saved = StudentProfile {
            name: Some("Ana".into()),
            language: Some(TutorLanguage::Es),
            example_themes: vec![ExampleTheme::Cooking],
            ..Default::default()
        };
        let sent = StudentProfile {
            name: Some("Anita".into()),
            ..Default::default()
        };
        let merged = sent.or(&saved);
        assert_eq!(merged.name.as_deref(), Some("Anita"));
        assert_eq!(merged.language, Some(TutorLanguage::Es));
        assert_eq!(merged.example_themes, vec![ExampleTheme::Cooking]);
    }
}
