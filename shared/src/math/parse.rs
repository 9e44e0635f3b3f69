//! Tokenizer and recursive-descent parser.

use super::expr::{BinaryOp, BuiltinFunction, CompareOp, Expr, MAX_DEPTH};
use super::{MathError, Rational};

/// How identifiers are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    /// Students write `xy` for x·y and `2ab` for 2·a·b: every letter is its
    /// own variable (function names and keywords excepted). Blueprint
    /// formulas use multi-letter parameter names instead.
    pub single_letter_variables: bool,
    /// Longest accepted input, in characters.
    pub max_chars: usize,
}

impl ParseOptions {
    /// For what students type.
    pub fn student() -> Self {
        ParseOptions {
            single_letter_variables: true,
            max_chars: 500,
        }
    }

    /// For blueprint formulas over named parameters.
    pub fn formula() -> Self {
        ParseOptions {
            single_letter_variables: false,
            max_chars: 2000,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(Rational),
    Ident(String),
    Func(BuiltinFunction),
    Pi,
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    Percent,
    LParen,
    RParen,
    Comma,
    Cmp(CompareOp),
    And,
    Or,
    Not,
}

struct Token {
    tok: Tok,
    /// Character offset, for messages.
    at: usize,
}

fn syntax(at: usize, message: impl Into<String>) -> MathError {
    MathError::Syntax {
        position: at,
        message: message.into(),
    }
}

fn keyword(word: &str) -> Option<Tok> {
    match word {
        "and" => Some(Tok::And),
        "or" => Some(Tok::Or),
        "not" => Some(Tok::Not),
        "pi" => Some(Tok::Pi),
        _ => BuiltinFunction::from_name(word).map(Tok::Func),
    }
}

fn tokenize(input: &str, options: ParseOptions) -> Result<Vec<Token>, MathError> {
    let chars: Vec<char> = input.chars().collect();
    if chars.len() > options.max_chars {
        return Err(MathError::TooComplex);
    }
    let mut out = Vec::new();
    let mut i = 0;
    let push = |out: &mut Vec<Token>, tok, at| out.push(Token { tok, at });
    while i < chars.len() {
        let c = chars[i];
        let at = i;
        let next = chars.get(i + 1).copied();
        match c {
            _ if c.is_whitespace() => {
                i += 1;
                continue;
            }
            '0'..='9' | '.' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                // Scientific notation: e/E followed by a digit or a signed digit.
                if i < chars.len() && matches!(chars[i], 'e' | 'E') {
                    let signed = matches!(chars.get(i + 1), Some('+' | '-'));
                    let digit_at = if signed { i + 2 } else { i + 1 };
                    if chars.get(digit_at).is_some_and(char::is_ascii_digit) {
                        i = digit_at;
                        while i < chars.len() && chars[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                }
                let text: String = chars[start..i].iter().collect();
                let value = Rational::parse_decimal(&text).map_err(|e| match e {
                    MathError::Syntax { message, .. } => syntax(start, message),
                    other => other,
                })?;
                push(&mut out, Tok::Num(value), start);
                continue;
            }
            _ if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if let Some(tok) = keyword(&word.to_lowercase()) {
                    push(&mut out, tok, start);
                } else if c == 'π' && word.chars().count() == 1 {
                    push(&mut out, Tok::Pi, start);
                } else if options.single_letter_variables {
                    for (k, ch) in word.chars().enumerate() {
                        if ch.is_ascii_digit() {
                            push(
                                &mut out,
                                Tok::Num(Rational::integer(i128::from(ch as u8 - b'0'))),
                                start + k,
                            );
                        } else {
                            push(&mut out, Tok::Ident(ch.to_string()), start + k);
                        }
                    }
                } else {
                    push(&mut out, Tok::Ident(word), start);
                }
                continue;
            }
            '+' => push(&mut out, Tok::Plus, at),
            '-' | '−' | '–' => push(&mut out, Tok::Minus, at),
            '*' if next == Some('*') => {
                push(&mut out, Tok::Caret, at);
                i += 1;
            }
            '*' | '×' | '·' | '⋅' | '∙' => push(&mut out, Tok::Star, at),
            '/' | '÷' | '∕' => push(&mut out, Tok::Slash, at),
            '^' => push(&mut out, Tok::Caret, at),
            '²' | '³' => {
                push(&mut out, Tok::Caret, at);
                push(
                    &mut out,
                    Tok::Num(Rational::integer(if c == '²' { 2 } else { 3 })),
                    at,
                );
            }
            '√' => push(&mut out, Tok::Func(BuiltinFunction::Sqrt), at),
            '%' => push(&mut out, Tok::Percent, at),
            '(' | '[' | '{' => push(&mut out, Tok::LParen, at),
            ')' | ']' | '}' => push(&mut out, Tok::RParen, at),
            ',' => push(&mut out, Tok::Comma, at),
            '=' => {
                if next == Some('=') {
                    i += 1;
                }
                push(&mut out, Tok::Cmp(CompareOp::Eq), at);
            }
            '!' if next == Some('=') => {
                push(&mut out, Tok::Cmp(CompareOp::Ne), at);
                i += 1;
            }
            '!' => push(&mut out, Tok::Not, at),
            '≠' => push(&mut out, Tok::Cmp(CompareOp::Ne), at),
            '<' if next == Some('=') => {
                push(&mut out, Tok::Cmp(CompareOp::Le), at);
                i += 1;
            }
            '<' => push(&mut out, Tok::Cmp(CompareOp::Lt), at),
            '≤' => push(&mut out, Tok::Cmp(CompareOp::Le), at),
            '>' if next == Some('=') => {
                push(&mut out, Tok::Cmp(CompareOp::Ge), at);
                i += 1;
            }
            '>' => push(&mut out, Tok::Cmp(CompareOp::Gt), at),
            '≥' => push(&mut out, Tok::Cmp(CompareOp::Ge), at),
            '&' if next == Some('&') => {
                push(&mut out, Tok::And, at);
                i += 1;
            }
            '|' if next == Some('|') => {
                push(&mut out, Tok::Or, at);
                i += 1;
            }
            _ => return Err(syntax(at, format!("unexpected `{c}`"))),
        }
        i += 1;
    }
    Ok(out)
}

/// Parses `input` into an expression tree.
pub fn parse(input: &str, options: ParseOptions) -> Result<Expr, MathError> {
    let tokens = tokenize(input, options)?;
    if tokens.is_empty() {
        return Err(syntax(0, "empty expression"));
    }
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
        end: input.chars().count(),
    };
    let expr = parser.or()?;
    match parser.tokens.get(parser.pos) {
        None => Ok(expr),
        Some(t) => Err(syntax(t.at, "unexpected text after the expression")),
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|t| &t.tok)
    }

    fn at(&self) -> usize {
        self.tokens.get(self.pos).map_or(self.end, |t| t.at)
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek() == Some(tok) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Runs `f` one level deeper, refusing pathological nesting.
    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, MathError>,
    ) -> Result<T, MathError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(MathError::TooComplex);
        }
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn or(&mut self) -> Result<Expr, MathError> {
        let mut left = self.and()?;
        while self.eat(&Tok::Or) {
            let right = self.and()?;
            left = Expr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, MathError> {
        let mut left = self.not()?;
        while self.eat(&Tok::And) {
            let right = self.not()?;
            left = Expr::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, MathError> {
        if self.eat(&Tok::Not) {
            let inner = self.nested(Self::not)?;
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Expr, MathError> {
        let left = self.additive()?;
        if let Some(Tok::Cmp(op)) = self.peek().cloned() {
            self.pos += 1;
            let right = self.additive()?;
            if let Some(Tok::Cmp(_)) = self.peek() {
                return Err(syntax(self.at(), "only one comparison is allowed here"));
            }
            return Ok(Expr::Compare(op, Box::new(left), Box::new(right)));
        }
        Ok(left)
    }

    fn additive(&mut self) -> Result<Expr, MathError> {
        let mut left = self.multiplicative()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Plus) => BinaryOp::Add,
                Some(Tok::Minus) => BinaryOp::Sub,
                _ => return Ok(left),
            };
            self.pos += 1;
            let right = self.multiplicative()?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    /// Whether the next token can start an operand written right after
    /// another one (`2x`, `3(x+1)`, `(a)(b)`). Two bare numbers do not
    /// multiply: `1 1/2` is a mixed number, handled before parsing.
    fn implicit_follows(&self, left: &Expr) -> bool {
        match self.peek() {
            Some(Tok::Ident(_) | Tok::Func(_) | Tok::Pi | Tok::LParen) => true,
            Some(Tok::Num(_)) => !matches!(left, Expr::Num(_) | Expr::Neg(_)),
            _ => false,
        }
    }

    fn multiplicative(&mut self) -> Result<Expr, MathError> {
        let mut left = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Star) => {
                    self.pos += 1;
                    BinaryOp::Mul
                }
                Some(Tok::Slash) => {
                    self.pos += 1;
                    BinaryOp::Div
                }
                _ if self.implicit_follows(&left) => BinaryOp::Mul,
                _ => return Ok(left),
            };
            let right = self.unary()?;
            left = Expr::Binary(op, Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, MathError> {
        if self.eat(&Tok::Minus) {
            let inner = self.nested(Self::unary)?;
            return Ok(Expr::Neg(Box::new(inner)));
        }
        if self.eat(&Tok::Plus) {
            return self.nested(Self::unary);
        }
        self.power()
    }

    fn power(&mut self) -> Result<Expr, MathError> {
        let base = self.postfix()?;
        if self.eat(&Tok::Caret) {
            // Right-associative, and the exponent may carry a sign: 2^-1.
            let exponent = self.nested(Self::unary)?;
            return Ok(Expr::Binary(
                BinaryOp::Pow,
                Box::new(base),
                Box::new(exponent),
            ));
        }
        Ok(base)
    }

    fn postfix(&mut self) -> Result<Expr, MathError> {
        let mut e = self.atom()?;
        while self.eat(&Tok::Percent) {
            e = Expr::Percent(Box::new(e));
        }
        Ok(e)
    }

    fn atom(&mut self) -> Result<Expr, MathError> {
        let at = self.at();
        let Some(tok) = self.peek().cloned() else {
            return Err(syntax(at, "the expression ends too early"));
        };
        self.pos += 1;
        match tok {
            Tok::Num(r) => Ok(Expr::Num(r)),
            Tok::Ident(name) => Ok(Expr::Var(name)),
            Tok::Pi => Ok(Expr::Pi),
            Tok::LParen => {
                let inner = self.nested(Self::or)?;
                if !self.eat(&Tok::RParen) {
                    return Err(syntax(self.at(), "a bracket is not closed"));
                }
                Ok(inner)
            }
            Tok::Func(f) => self.call(f, at),
            Tok::RParen => Err(syntax(at, "a closing bracket has no opening bracket")),
            _ => Err(syntax(at, "expected a number, a letter or a bracket")),
        }
    }

    fn call(&mut self, f: BuiltinFunction, at: usize) -> Result<Expr, MathError> {
        let args = if self.eat(&Tok::LParen) {
            let mut args = Vec::new();
            if !self.eat(&Tok::RParen) {
                loop {
                    args.push(self.nested(Self::or)?);
                    if self.eat(&Tok::Comma) {
                        continue;
                    }
                    if self.eat(&Tok::RParen) {
                        break;
                    }
                    return Err(syntax(self.at(), "a bracket is not closed"));
                }
            }
            args
        } else if f == BuiltinFunction::Sqrt {
            // √9, √x: the root sign applies to the next operand.
            vec![self.nested(Self::postfix)?]
        } else {
            return Err(syntax(at, format!("{} needs brackets", f.name())));
        };
        let (min, max) = f.arity();
        if args.len() < min || args.len() > max {
            return Err(syntax(
                at,
                format!(
                    "{} takes {} argument{}",
                    f.name(),
                    if min == max {
                        min.to_string()
                    } else {
                        format!("{min} to {max}")
                    },
                    if max == 1 { "" } else { "s" }
                ),
            ));
        }
        Ok(Expr::Call(f, args))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Number, Value, evaluate};
    use super::*;

    fn student(text: &str) -> Expr {
        parse(text, ParseOptions::student()).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn value(text: &str) -> String {
        evaluate(&student(text), &|_| None).unwrap().to_string()
    }

    fn value_at(text: &str, x: i128) -> String {
        evaluate(&student(text), &|v| (v == "x").then_some(Number::int(x)))
            .unwrap()
            .to_string()
    }

    #[test]
    fn precedence_follows_school_conventions() {
        assert_eq!(value("2 + 3 * 4"), "14");
        assert_eq!(value("(2 + 3) * 4"), "20");
        assert_eq!(value("-2^2"), "-4");
        assert_eq!(value("2^3^2"), "512");
        assert_eq!(value("2^-1"), "1/2");
        assert_eq!(value("10 - 4 - 3"), "3");
        assert_eq!(value("24 / 4 / 2"), "3");
        assert_eq!(value("3 × 4 ÷ 6 − 1"), "1");
        assert_eq!(value("50%"), "1/2");
        assert_eq!(value("12.5% * 8"), "1");
        assert_eq!(value("√16 + 3²"), "13");
        assert_eq!(value("[2 + {3}] * 2"), "10");
    }

    #[test]
    fn implicit_multiplication_for_students() {
        assert_eq!(value_at("2x+3", 4), "11");
        assert_eq!(value_at("2(x+1)", 4), "10");
        assert_eq!(value_at("(x+1)(x-1)", 4), "15");
        assert_eq!(value_at("x/2x", 4), "8", "left to right: (x/2)·x");
        assert_eq!(student("xy").variables(), vec!["x", "y"]);
        assert!(parse("1 1/2", ParseOptions::student()).is_err());
    }

    #[test]
    fn formulas_use_named_parameters_and_functions() {
        let e = parse(
            "mod(op1, 10) + mod(op2, 10) >= 10 and op1 != op2",
            ParseOptions::formula(),
        )
        .unwrap();
        let vars = |name: &str| match name {
            "op1" => Some(Number::int(47)),
            "op2" => Some(Number::int(38)),
            _ => None,
        };
        assert_eq!(evaluate(&e, &vars).unwrap(), Value::Bool(true));
        let e = parse(
            "gcd(12, 18) + lcm(4, 6) + floor(-7/2) + mod(-7, 3)",
            ParseOptions::formula(),
        )
        .unwrap();
        assert_eq!(evaluate(&e, &|_| None).unwrap().to_string(), "16");
    }

    #[test]
    fn equations_parse_as_comparisons() {
        assert!(matches!(student("x = 4"), Expr::Compare(CompareOp::Eq, ..)));
        assert!(parse("x = 4 = y", ParseOptions::student()).is_err());
    }

    #[test]
    fn errors_say_where() {
        for (text, at) in [
            ("2 + ", 4),
            ("(1 + 2", 6),
            ("1 + )", 4),
            ("3 $ 4", 2),
            ("", 0),
        ] {
            match parse(text, ParseOptions::student()) {
                Err(MathError::Syntax { position, .. }) => assert_eq!(position, at, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn adversarial_input_is_bounded() {
        let deep = "(".repeat(10_000) + "1" + &")".repeat(10_000);
        assert!(parse(&deep, ParseOptions::formula()).is_err());
        let nested = "(".repeat(100) + "1" + &")".repeat(100);
        assert_eq!(
            parse(&nested, ParseOptions::student()),
            Err(MathError::TooComplex)
        );
        let tower = student("10^10^10");
        assert_eq!(evaluate(&tower, &|_| None), Err(MathError::TooLarge));
        let minus = "-".repeat(400) + "1";
        assert!(parse(&minus, ParseOptions::student()).is_err());
        assert_eq!(
            evaluate(&student("1/(2-2)"), &|_| None),
            Err(MathError::DivisionByZero)
        );
        assert!(evaluate(&student("sqrt(-4)"), &|_| None).is_err());
        assert!(evaluate(&student("(-8)^(1/3)"), &|_| None).is_err());
    }

    #[test]
    fn displays_with_minimal_brackets() {
        for (text, shown) in [
            ("2*(x+1)", "2*(x + 1)"),
            ("(2*x)+1", "2*x + 1"),
            ("a-(b-c)", "a - (b - c)"),
            ("(a-b)-c", "a - b - c"),
            ("2^(3^2)", "2^3^2"),
            ("(2^3)^2", "(2^3)^2"),
            ("-(x+1)", "-(x + 1)"),
        ] {
            let e = student(text);
            assert_eq!(e.to_string(), shown, "{text}");
            assert_eq!(student(shown), e, "{shown} reparses to the same tree");
        }
    }
}

#[cfg(test)]
mod properties {
    use super::super::{Number, evaluate};
    use super::*;
    use proptest::prelude::*;

    fn arb_expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            (0i128..1000).prop_map(|n| Expr::Num(Rational::integer(n))),
            (1i128..50, 2i128..50).prop_map(|(n, d)| Expr::Num(Rational::new(n, d).unwrap())),
            prop::sample::select(vec!["x", "y"]).prop_map(|v| Expr::Var(v.to_owned())),
        ];
        leaf.prop_recursive(5, 40, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| Expr::Neg(Box::new(e))),
                (
                    prop::sample::select(vec![
                        BinaryOp::Add,
                        BinaryOp::Sub,
                        BinaryOp::Mul,
                        BinaryOp::Div,
                        BinaryOp::Pow
                    ]),
                    inner.clone(),
                    inner.clone()
                )
                    .prop_map(|(op, a, b)| Expr::Binary(
                        op,
                        Box::new(a),
                        Box::new(b)
                    )),
                prop::collection::vec(inner, 1..3)
                    .prop_map(|args| Expr::Call(BuiltinFunction::Max, args)),
            ]
        })
    }

    proptest! {
        /// Printing then parsing gives back an expression with the same value.
        #[test]
        fn display_round_trips(e in arb_expr(), x in -20i128..20, y in 1i128..20) {
            let shown = e.to_string();
            let back = parse(&shown, ParseOptions::student())
                .map_err(|err| TestCaseError::fail(format!("{shown}: {err}")))?;
            let vars = |v: &str| match v { "x" => Some(Number::int(x)), "y" => Some(Number::int(y)), _ => None };
            let (a, b) = (evaluate(&e, &vars), evaluate(&back, &vars));
            match (a, b) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{}", shown),
                (Err(_), Err(_)) => {}
                (a, b) => prop_assert!(false, "{shown}: {a:?} vs {b:?}"),
            }
        }

        /// No input makes the parser or evaluator panic.
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,80}") {
            for options in [ParseOptions::student(), ParseOptions::formula()] {
                if let Ok(e) = parse(&text, options) {
                    let _ = evaluate(&e, &|_| Some(Number::int(3)));
                }
            }
        }

        #[test]
        fn operator_soup_never_panics(text in "[0-9x()+*/^%.=<>, -]{0,120}") {
            if let Ok(e) = parse(&text, ParseOptions::student()) {
                let _ = evaluate(&e, &|_| Some(Number::int(-2)));
            }
        }
    }
}
