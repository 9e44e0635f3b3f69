//! Skill blueprints (`workflows/blueprints/*.yaml`): what a
//! generated practice item assesses, and how to make one.
//!
//! A blueprint names the skill, the random parameters an item is built from
//! (`parameters`, values worked out from them in `derived`, rules every item
//! obeys in `constraints`), the difficulty scenarios that sort items from
//! easy to hard, the question wording (`stems`, `latex`), the answer as a
//! formula over the parameters, the wrong answers offered beside it
//! (`distractors`, each the result of a typical mistake), and how an answer
//! is checked. A scenario may word its question differently, ask for a
//! different answer or offer different distractors: it then gives its own
//! `stems`, `latex`, `answer` or `distractors`.
//!
//! Because the answer is computed, a blueprint can also say how it is
//! worked out: `steps`, each a sentence over the parameters with the value
//! it works out, and `representations`, the same question seen another way
//! (a number line, an area model, a bar model). Hints are built from them.
//! A scenario may give its own `steps` and `representations` too.
//!
//! Formulas use the language of [`crate::math`]: `+ - * / ^`,
//! `mod`, `floor`, `gcd`, comparisons and `and`/`or`/`not`. Nothing else
//! is ever run.

use std::fmt;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::math::{Expr, MathError, ParseOptions, Rational, parse};
use crate::text::template::Template;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Blueprint {
    /// Skill id, e.g. `MATH.ARITH.ADD.2DIGIT`.
    pub id: String,
    /// e.g. `Mathematics > Arithmetic > Addition`.
    pub domain: String,
    pub skill_statement: String,
    /// Bloom's level: Remember, Understand, Apply, Analyze, Evaluate, Create.
    pub cognitive_level: CognitiveLevel,
    /// Random inputs of an item, drawn independently and uniformly.
    pub parameters: Named<Parameter>,
    /// Values computed from the parameters (and earlier derived values).
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub derived: Named<Formula>,
    /// Conditions every item satisfies.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constraints: Vec<Formula>,
    pub difficulty: DifficultyFactors,
    /// Question wordings; one is picked per item.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stems: Vec<Template>,
    /// The same question told in a student's example theme (`sports`,
    /// `cooking`, ...): wordings over the same values as `stems`, one
    /// picked per item for a student who likes that theme.
    #[serde(default, skip_serializing_if = "Themes::is_empty")]
    pub themes: Themes,
    /// The question as LaTeX, shown under the wording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latex: Option<Template>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub distractors: Vec<Distractor>,
    /// The worked solution, step by step; a step applies when its `when` holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<SolutionStep>,
    /// The question in another form, for a student the steps did not help.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub representations: Vec<Representation>,
    #[serde(default)]
    pub presentation: Presentation,
    #[serde(default)]
    pub evaluation: Evaluation,
    /// Expected accuracy and speed at three levels of skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmarks: Option<Benchmarks>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CognitiveLevel {
    Remember,
    Understand,
    Apply,
    Analyze,
    Evaluate,
    Create,
}

/// A random parameter: whole numbers in a range, decimals with a fixed
/// number of places in a range, or one of a list of values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parameter {
    #[serde(rename = "type")]
    pub kind: ParameterKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<Exact>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Exact>,
    /// Gap between allowed integers (e.g. 5 for 5, 10, 15, ...); default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<Exact>,
    /// Decimal places of a decimal parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub places: Option<u32>,
    /// The allowed values of a choice parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<Exact>>,
    /// Values never drawn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<Exact>,
}

/// Most decimal places a decimal parameter may have.
pub const MAX_PLACES: u32 = 6;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParameterKind {
    Integer,
    Decimal,
    Choice,
}

/// Difficulty factors: an item's difficulty is the weight
/// of its scenario plus the adjustments of the features it has, kept in [0, 1].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DifficultyFactors {
    /// Among scenarios asking the same question, an item belongs to the
    /// first whose parameter ranges and `when` it fits; the last of them may
    /// omit `when` to take the rest. A scenario with its own `latex` or
    /// `answer` asks a different question and stands alone.
    pub scenarios: Vec<Scenario>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<Feature>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    /// Difficulty in [0, 1].
    pub weight: f64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// What makes an item belong here; absent: every item no earlier scenario took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Formula>,
    /// Narrower (or different) ranges for some parameters in this scenario.
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub parameters: Named<Parameter>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stems: Option<Vec<Template>>,
    /// Theme wordings of this scenario's own `stems`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub themes: Option<Themes>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latex: Option<Template>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distractors: Option<Vec<Distractor>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<SolutionStep>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub representations: Option<Vec<Representation>>,
}

/// Theme wordings of a question, by theme name, in the order written.
pub type Themes = Named<Vec<Template>>;

static EMPTY_THEMES: Themes = Named(Vec::new());

/// One step of a worked solution: `text` says what to do with the item's
/// numbers and shows what it gives where `{result}` is written; `value`
/// is that result. A hint can show the step with its result left open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SolutionStep {
    pub text: Template,
    pub value: Formula,
    /// The step applies only when this holds (a borrow only when one is needed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Formula>,
}

/// The name a step's text uses for the step's own value.
pub const STEP_RESULT: &str = "result";

/// The question shown another way, e.g. as a number line or an area model.
/// It poses the problem; it never works out the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Representation {
    /// What kind of picture it is: number_line, area_model, bar_model, ...
    pub kind: String,
    pub text: Template,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Formula>,
}

/// A parameter feature that makes an item a little harder (or easier).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Feature {
    pub name: String,
    pub when: Formula,
    /// Added to the difficulty when `when` holds.
    pub add: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerSpec {
    /// A formula, or a list of formulas for kinds with several parts.
    pub value: Formulas,
    pub kind: AnswerShape,
    /// Written after the value, e.g. `cm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The unknown an equation solves for: options read `x = 4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variable: Option<String>,
}

/// The shape of an answer: how it is written and how a grader reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerShape {
    /// A whole number: `85`, `-4`.
    Integer,
    /// A terminating decimal: `6.15`.
    Decimal,
    /// One value written in lowest terms (`5/4`), or `[numerator,
    /// denominator]` written exactly as given (`4/6`).
    Fraction,
    /// `[quotient, remainder]` written `26 r 2`.
    QuotientRemainder,
    /// A whole number from 0 to 2^32 - 1 written as a dotted address.
    Ipv4,
}

impl AnswerShape {
    pub fn as_str(self) -> &'static str {
        match self {
            AnswerShape::Integer => "integer",
            AnswerShape::Decimal => "decimal",
            AnswerShape::Fraction => "fraction",
            AnswerShape::QuotientRemainder => "quotient_remainder",
            AnswerShape::Ipv4 => "ipv4",
        }
    }

    /// How many formulas a value of this kind takes.
    pub fn parts(self) -> std::ops::RangeInclusive<usize> {
        match self {
            AnswerShape::Fraction => 1..=2,
            AnswerShape::QuotientRemainder => 2..=2,
            _ => 1..=1,
        }
    }
}

/// A wrong answer that a typical mistake produces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Distractor {
    /// The mistake, e.g. `wrong_operation`. Built in, and needing no
    /// `value`: off_by_one, off_by_ten, sign_error, swapped_fraction.
    pub strategy: String,
    /// The wrong answer as a formula (like `answer.value`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Formulas>,
    /// Written as another kind than the answer (e.g. a decimal for `26 r 2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<AnswerShape>,
    /// Offered only when this holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Formula>,
    /// The unit's mistake tag a student choosing it gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mistake_tag: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// Distractor strategies computed from the answer alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltinStrategy {
    /// One more or one less (for a decimal, one unit of its last place;
    /// for a fraction, one more or less in the numerator).
    OffByOne,
    /// Ten more or ten less.
    OffByTen,
    /// The opposite sign.
    SignError,
    /// Numerator and denominator swapped.
    SwappedFraction,
}

impl BuiltinStrategy {
    pub const NAMES: [&'static str; 4] =
        ["off_by_one", "off_by_ten", "sign_error", "swapped_fraction"];

    pub fn from_name(name: &str) -> Option<BuiltinStrategy> {
        Some(match name {
            "off_by_one" => BuiltinStrategy::OffByOne,
            "off_by_ten" => BuiltinStrategy::OffByTen,
            "sign_error" => BuiltinStrategy::SignError,
            "swapped_fraction" => BuiltinStrategy::SwappedFraction,
            _ => return None,
        })
    }

    /// Whether the strategy can be applied to a single value of `kind`.
    pub fn applies_to(self, kind: AnswerShape) -> bool {
        match self {
            BuiltinStrategy::OffByOne | BuiltinStrategy::SignError => matches!(
                kind,
                AnswerShape::Integer | AnswerShape::Decimal | AnswerShape::Fraction
            ),
            BuiltinStrategy::OffByTen => {
                matches!(kind, AnswerShape::Integer | AnswerShape::Decimal)
            }
            BuiltinStrategy::SwappedFraction => kind == AnswerShape::Fraction,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Presentation {
    pub format: ItemFormat,
    /// Options shown (the answer and `options - 1` distractors).
    pub options: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_limit_seconds: Option<u32>,
}

impl Default for Presentation {
    fn default() -> Self {
        Presentation {
            format: ItemFormat::MultipleChoice,
            options: 4,
            time_limit_seconds: None,
        }
    }
}

/// Whether the student picks an option or types the answer. Distractors
/// are generated either way: a typed answer equal to one is tagged with
/// its mistake.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemFormat {
    #[default]
    MultipleChoice,
    Typed,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Evaluation {
    pub method: EvaluationMethod,
    /// Largest accepted difference, for `numeric_tolerance`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// A fraction must be written in lowest terms to count as right.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub simplest_form: bool,
}

/// How a grader compares a student's answer with the expected one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvaluationMethod {
    /// The same value (`0.5` and `1/2` agree), or for text kinds
    /// (`26 r 2`, an address) the same text up to spacing and case.
    #[default]
    Exact,
    /// Within `tolerance` of the expected value.
    NumericTolerance,
    /// Algebraically the same expression or equation.
    ExpressionEquivalence,
    /// Only the chosen option counts.
    MultipleChoice,
}

impl EvaluationMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            EvaluationMethod::Exact => "exact",
            EvaluationMethod::NumericTolerance => "numeric_tolerance",
            EvaluationMethod::ExpressionEquivalence => "expression_equivalence",
            EvaluationMethod::MultipleChoice => "multiple_choice",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Benchmarks {
    pub novice: Benchmark,
    pub competent: Benchmark,
    pub expert: Benchmark,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Benchmark {
    /// Share of items answered correctly, in [0, 1].
    pub accuracy: f64,
    /// Typical time per item.
    pub seconds: f64,
}

impl Blueprint {
    /// A short digest of everything that shapes a generated item. A drill
    /// token records it, so that an item is never regenerated from an
    /// edited blueprint (which could give a different question or answer).
    /// Steps and representations explain an item without changing it, and
    /// theme wordings retell it with the same numbers and answer (they
    /// draw nothing from the item's seed), so editing them leaves the
    /// drills already handed out valid.
    pub fn fingerprint(&self) -> [u8; 8] {
        let mut shaping = self.clone();
        shaping.steps.clear();
        shaping.representations.clear();
        shaping.themes = Themes::default();
        for s in &mut shaping.difficulty.scenarios {
            s.steps = None;
            s.representations = None;
            s.themes = None;
        }
        let canonical = serde_json::to_vec(&shaping).unwrap_or_default();
        let digest = Sha256::digest(&canonical);
        let mut out = [0u8; 8];
        out.copy_from_slice(&digest[..8]);
        out
    }

    /// The wordings `scenario` uses.
    pub fn stems_for<'a>(&'a self, scenario: &'a Scenario) -> &'a [Template] {
        scenario.stems.as_deref().unwrap_or(&self.stems)
    }

    /// The theme wordings `scenario` uses: its own, else, when it words the
    /// question as the blueprint does, the blueprint's. A scenario with its
    /// own stems and no themes of its own has none.
    pub fn themes_for<'a>(&'a self, scenario: &'a Scenario) -> &'a Themes {
        match (&scenario.themes, &scenario.stems) {
            (Some(own), _) => own,
            (None, None) => &self.themes,
            (None, Some(_)) => &EMPTY_THEMES,
        }
    }

    pub fn latex_for<'a>(&'a self, scenario: &'a Scenario) -> Option<&'a Template> {
        scenario.latex.as_ref().or(self.latex.as_ref())
    }

    pub fn answer_for<'a>(&'a self, scenario: &'a Scenario) -> Option<&'a AnswerSpec> {
        scenario.answer.as_ref().or(self.answer.as_ref())
    }

    pub fn distractors_for<'a>(&'a self, scenario: &'a Scenario) -> &'a [Distractor] {
        scenario.distractors.as_deref().unwrap_or(&self.distractors)
    }

    pub fn steps_for<'a>(&'a self, scenario: &'a Scenario) -> &'a [SolutionStep] {
        scenario.steps.as_deref().unwrap_or(&self.steps)
    }

    pub fn representations_for<'a>(&'a self, scenario: &'a Scenario) -> &'a [Representation] {
        scenario
            .representations
            .as_deref()
            .unwrap_or(&self.representations)
    }

    /// Whether two scenarios ask the same question (same LaTeX and same
    /// answer): only such scenarios compete for an item, first match first.
    pub fn same_question(&self, a: &Scenario, b: &Scenario) -> bool {
        self.latex_for(a).map(Template::text) == self.latex_for(b).map(Template::text)
            && self.answer_for(a) == self.answer_for(b)
    }

    /// The range of parameter `name` in `scenario`.
    pub fn parameter_for<'a>(
        &'a self,
        scenario: &'a Scenario,
        name: &str,
    ) -> Option<&'a Parameter> {
        scenario
            .parameters
            .get(name)
            .or_else(|| self.parameters.get(name))
    }
}

/// A formula over parameters, parsed when the blueprint is read. A formula
/// that does not parse keeps its error, for validation to report where it
/// is written.
#[derive(Debug, Clone)]
pub struct Formula {
    text: String,
    parsed: Result<Expr, MathError>,
}

impl Formula {
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let parsed = parse(&text, ParseOptions::formula());
        Formula { text, parsed }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn expr(&self) -> Result<&Expr, &MathError> {
        self.parsed.as_ref()
    }
}

impl PartialEq for Formula {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Serialize for Formula {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Formula {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FormulaVisitor)
    }
}

struct FormulaVisitor;

impl Visitor<'_> for FormulaVisitor {
    type Value = Formula;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a formula such as \"a + b\", or a number")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Formula, E> {
        Ok(Formula::new(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Formula, E> {
        Ok(Formula::new(v.to_string()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Formula, E> {
        Ok(Formula::new(v.to_string()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Formula, E> {
        Ok(Formula::new(v.to_string()))
    }
}

/// One formula, or a list of them (`[floor(a / b), mod(a, b)]`).
#[derive(Debug, Clone, PartialEq)]
pub struct Formulas(pub Vec<Formula>);

impl Serialize for Formulas {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Formulas {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct FormulasVisitor;
        impl<'de> Visitor<'de> for FormulasVisitor {
            type Value = Formulas;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a formula, or a list of formulas")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Formulas, E> {
                FormulaVisitor.visit_str(v).map(|f| Formulas(vec![f]))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Formulas, E> {
                FormulaVisitor.visit_i64(v).map(|f| Formulas(vec![f]))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Formulas, E> {
                FormulaVisitor.visit_u64(v).map(|f| Formulas(vec![f]))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Formulas, E> {
                FormulaVisitor.visit_f64(v).map(|f| Formulas(vec![f]))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Formulas, A::Error> {
                let mut out = Vec::new();
                while let Some(f) = seq.next_element::<Formula>()? {
                    out.push(f);
                }
                Ok(Formulas(out))
            }
        }
        d.deserialize_any(FormulasVisitor)
    }
}

/// An exact number written in YAML: `12`, `-0.25`, or a string such as
/// `"3/4"`. Decimals are read from their written digits, never through a
/// binary float, so `0.1` is exactly one tenth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exact(pub Rational);

impl Exact {
    fn parse(text: &str) -> Result<Exact, String> {
        let text = text.trim();
        let (negative, digits) = match text.strip_prefix('-') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, text),
        };
        let value = match digits.split_once('/') {
            Some((n, d)) => Rational::parse_decimal(n.trim())
                .and_then(|n| Rational::parse_decimal(d.trim()).and_then(|d| n.checked_div(d))),
            None => Rational::parse_decimal(digits),
        }
        .map_err(|e| format!("`{text}` is not a number: {e}"))?;
        Ok(Exact(if negative { -value } else { value }))
    }
}

impl Serialize for Exact {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

impl<'de> Deserialize<'de> for Exact {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ExactVisitor;
        impl Visitor<'_> for ExactVisitor {
            type Value = Exact;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number such as 12, 0.25 or \"3/4\"")
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Exact, E> {
                Ok(Exact(Rational::integer(i128::from(v))))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Exact, E> {
                Ok(Exact(Rational::integer(i128::from(v))))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Exact, E> {
                // The shortest decimal that reads back as `v` is what the
                // author wrote (for up to 15 significant digits).
                if !v.is_finite() {
                    return Err(E::custom("a number must be finite"));
                }
                Exact::parse(&format!("{v}")).map_err(E::custom)
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Exact, E> {
                Exact::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(ExactVisitor)
    }
}

/// A YAML mapping whose entries keep the order they are written in
/// (derived values may use the ones above them).
#[derive(Debug, Clone, PartialEq)]
pub struct Named<T>(pub Vec<(String, T)>);

impl<T> Default for Named<T> {
    fn default() -> Self {
        Named(Vec::new())
    }
}

impl<T> Named<T> {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn get(&self, name: &str) -> Option<&T> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v))
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }
}

impl<T: Serialize> Serialize for Named<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Named<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NamedVisitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for NamedVisitor<T> {
            type Value = Named<T>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of names to values")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Named<T>, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, T>()? {
                    out.push((k, v));
                }
                Ok(Named(out))
            }
        }
        d.deserialize_map(NamedVisitor(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_read_exactly() {
        let values: Vec<Exact> =
            serde_yaml::from_str("[0.1, 12, -0.25, \"3/4\", \"-1/3\", 2.675]").unwrap();
        let expected = [(1, 10), (12, 1), (-1, 4), (3, 4), (-1, 3), (107, 40)];
        for (v, (n, d)) in values.iter().zip(expected) {
            assert_eq!(v.0, Rational::new(n, d).unwrap());
        }
        assert!(serde_yaml::from_str::<Exact>("twelve").is_err());
        assert!(serde_yaml::from_str::<Exact>("\"1/0\"").is_err());
    }

    #[test]
    fn named_entries_keep_their_order() {
        let named: Named<Formula> = serde_yaml::from_str("z: a + 1\nb: z * 2\na: 3").unwrap();
        assert_eq!(named.names().collect::<Vec<_>>(), ["z", "b", "a"]);
        assert_eq!(named.get("b").unwrap().text(), "z * 2");
        assert!(named.get("a").unwrap().expr().is_ok());
    }

    #[test]
    fn a_formula_that_does_not_parse_keeps_its_error() {
        let f: Formula = serde_yaml::from_str("\"a + \"").unwrap();
        assert!(f.expr().is_err());
        // Quoted: in a YAML flow list a bare comma would split `mod(a, b)`.
        let many: Formulas = serde_yaml::from_str(r#"["floor(a / b)", "mod(a, b)"]"#).unwrap();
        assert_eq!(many.0.len(), 2);
        let one: Formulas = serde_yaml::from_str("7").unwrap();
        assert_eq!(one.0[0].text(), "7");
    }

    #[test]
    fn the_fingerprint_follows_the_content() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../workflows/blueprints/add-2digit.yaml"
        ))
        .unwrap();
        let a: Blueprint = serde_yaml::from_str(&text).unwrap();
        let mut b = a.clone();
        assert_eq!(a.fingerprint(), b.fingerprint());
        b.difficulty.scenarios[0].weight += 0.01;
        assert_ne!(a.fingerprint(), b.fingerprint());
        let mut reworded = a.clone();
        reworded.steps.push(SolutionStep {
            text: Template::new("Add the ones: {result}"),
            value: Formula::new("mod(a, 10) + mod(b, 10)"),
            when: None,
        });
        reworded.representations.clear();
        assert_eq!(
            a.fingerprint(),
            reworded.fingerprint(),
            "explaining an item differently does not change the item"
        );
    }
}
