//! Who the student is, as far as they chose to say: the profile a thread is
//! personalised with (docs/architecture.md, "Who the student is"). Sent at
//! thread creation or kept with `PUT /me/profile`; a thread copies it at
//! creation, so a later profile change does not rewrite a conversation
//! under way.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How plainly the tutor words things.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LanguageLevel {
    /// Short sentences and everyday words.
    Simple,
    #[default]
    Standard,
    /// Precise vocabulary; fewer words of explanation.
    Advanced,
}

impl LanguageLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            LanguageLevel::Simple => "simple",
            LanguageLevel::Standard => "standard",
            LanguageLevel::Advanced => "advanced",
        }
    }
}

/// The language the tutor speaks. The offline tutor has a phrasebook for
/// each (course content itself stays in the language it was written in);
/// an LLM is told to answer in it.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TutorLanguage {
    #[default]
    En,
    Es,
}

impl TutorLanguage {
    pub fn as_str(self) -> &'static str {
        match self {
            TutorLanguage::En => "en",
            TutorLanguage::Es => "es",
        }
    }

    /// The language's name in English, for the LLM.
    pub fn name(self) -> &'static str {
        match self {
            TutorLanguage::En => "English",
            TutorLanguage::Es => "Spanish",
        }
    }
}

/// Everyday settings examples and word problems can be set in.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ExampleTheme {
    Sports,
    Cooking,
    Games,
    Money,
    Music,
    Animals,
    Nature,
    Space,
    Art,
    Travel,
}

impl ExampleTheme {
    pub const ALL: [ExampleTheme; 10] = [
        ExampleTheme::Sports,
        ExampleTheme::Cooking,
        ExampleTheme::Games,
        ExampleTheme::Money,
        ExampleTheme::Music,
        ExampleTheme::Animals,
        ExampleTheme::Nature,
        ExampleTheme::Space,
        ExampleTheme::Art,
        ExampleTheme::Travel,
    ];

    /// The theme called `name` (`sports`), if there is one.
    pub fn named(name: &str) -> Option<ExampleTheme> {
        ExampleTheme::ALL.into_iter().find(|t| t.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ExampleTheme::Sports => "sports",
            ExampleTheme::Cooking => "cooking",
            ExampleTheme::Games => "games",
            ExampleTheme::Money => "money",
            ExampleTheme::Music => "music",
            ExampleTheme::Animals => "animals",
            ExampleTheme::Nature => "nature",
            ExampleTheme::Space => "space",
            ExampleTheme::Art => "art",
            ExampleTheme::Travel => "travel",
        }
    }
}

/// `PUT /me/profile`, `GET /me/profile` and `student` of `POST /threads`:
/// every field optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StudentProfile {
    /// What the tutor calls the student (1 to 40 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// 8 to 18.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age: Option<u32>,
    /// School grade or year, 1 to 12.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grade: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language_level: Option<LanguageLevel>,
    /// Up to 3 distinct themes for examples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub example_themes: Vec<ExampleTheme>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<TutorLanguage>,
    /// In the student's own words (up to 300 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about_me: Option<String>,
}

impl StudentProfile {
    /// `self` with every field it leaves out taken from `fallback`.
    pub fn or(self, fallback: &StudentProfile) -> StudentProfile {
        StudentProfile {
            name: self.name.or_else(|| fallback.name.clone()),
            age: self.age.or(fallback.age),
            grade: self.grade.or(fallback.grade),
            language_level: self.language_level.or(fallback.language_level),
            example_themes: if self.example_themes.is_empty() {
                fallback.example_themes.clone()
            } else {
                self.example_themes
            },
            language: self.language.or(fallback.language),
            about_me: self.about_me.or_else(|| fallback.about_me.clone()),
        }
    }
}

/// An optional profile that must be a JSON object: serde alone would also
/// read a struct from a list of its fields (`[null, null]`).
pub(crate) fn profile_object<'de, D>(deserializer: D) -> Result<Option<StudentProfile>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    struct ObjectOrNull;
    impl<'de> serde::de::Visitor<'de> for ObjectOrNull {
        type Value = Option<StudentProfile>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object or null")
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            StudentProfile::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some)
        }
    }
    deserializer.deserialize_option(ObjectOrNull)
}

/// What the student chose to share in their profile, as the tutor prompt
/// is given it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[serde(default)]
pub struct Personalization {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub student_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grade: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub about_me: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preferred_examples: Vec<ExampleTheme>,
    pub language_level: LanguageLevel,
    pub language: TutorLanguage,
}

impl Personalization {
    pub fn is_default(&self) -> bool {
        *self == Personalization::default()
    }

    /// The student's example themes by name, most liked first: what a
    /// generated item's wording is told in when its blueprint offers one.
    pub fn theme_names(&self) -> Vec<&'static str> {
        self.preferred_examples.iter().map(|t| t.as_str()).collect()
    }
}

#[cfg(test)]
mod object_tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Holder {
        #[serde(default, deserialize_with = "profile_object")]
        student: Option<StudentProfile>,
    }

    #[test]
    fn a_profile_is_an_object_or_null_never_a_list() {
        let read = |json: &str| serde_json::from_str::<Holder>(json).map(|h| h.student);
        assert!(read(r#"{"student": [null, null]}"#).is_err());
        assert_eq!(read(r#"{"student": null}"#).unwrap(), None);
        assert_eq!(read("{}").unwrap(), None);
        assert!(read(r#"{"student": {}}"#).unwrap().is_some());
    }
}
