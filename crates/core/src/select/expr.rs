//! The text of Nsort's conditions (`-condition=name:C,test:(EXPR)`, `-include=(EXPR)`), parsed
//! into an [`Expr`] whose names are not yet resolved: a name is a field or, alone, another
//! condition, which only the whole spec can tell.
//!
//! ```text
//! or       := and { ('or' | '||') and }
//! and      := unary { ('and' | '&&') unary }
//! unary    := ('not' | '!') unary | '(' or ')' | test
//! test     := value [ CMP value | 'matches' STRING ]         (a lone name: a condition)
//! CMP      := eq ne lt le gt ge | = == != <> < <= > >=
//! value    := 'if' or 'then' value 'else' value | sum         (a derived field's value too)
//! sum      := product { ('+' | '-') product }
//! product  := factor { ('*' | '/') factor }
//! factor   := '-' factor | '(' value ')' | operand
//! operand  := NAME | NUMBER | 'text' | "text" | x'hex'
//! ```
//!
//! Words (`and`, `eq`, `matches`...) are case-insensitive; names are taken as written. A number is
//! `[+-]digits[.digits]`. Text between quotes takes the escapes `\n \t \r \\ \' \" \xHH`.

use std::fmt;

/// A condition as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Either side true.
    Or(Box<Expr>, Box<Expr>),
    /// Both sides true.
    And(Box<Expr>, Box<Expr>),
    /// The inner condition false.
    Not(Box<Expr>),
    /// Two values compared.
    Compare(Value, CmpOp, Value),
    /// A field's bytes searched by a regular expression (found anywhere in the field).
    Matches(Operand, String),
    /// Another condition, by its name.
    Named(String),
}

/// A value: an operand, arithmetic on values, or a choice between two by a condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A field or a constant.
    Operand(Operand),
    /// The value negated.
    Neg(Box<Value>),
    /// Two values added, subtracted, multiplied or divided.
    Arith(Box<Value>, ArithOp, Box<Value>),
    /// `if COND then A else B`.
    If(Box<Expr>, Box<Value>, Box<Value>),
}

/// An arithmetic operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/` (of whole numbers: the quotient, rounded toward zero).
    Div,
}

/// A field or a constant.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A field, by its name.
    Field(String),
    /// A number as written.
    Number(String),
    /// Quoted text, its escapes resolved.
    Text(Vec<u8>),
    /// `x'hex'`: the bytes.
    Hex(Vec<u8>),
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Less than.
    Lt,
    /// Less than or equal.
    Le,
    /// Greater than.
    Gt,
    /// Greater than or equal.
    Ge,
}

impl CmpOp {
    /// Whether `order` (left against right) satisfies the operator; None (a NaN) satisfies `ne`
    /// only.
    pub fn holds(self, order: Option<std::cmp::Ordering>) -> bool {
        use std::cmp::Ordering::*;
        match (self, order) {
            (CmpOp::Ne, None) => true,
            (_, None) => false,
            (CmpOp::Eq, Some(o)) => o == Equal,
            (CmpOp::Ne, Some(o)) => o != Equal,
            (CmpOp::Lt, Some(o)) => o == Less,
            (CmpOp::Le, Some(o)) => o != Greater,
            (CmpOp::Gt, Some(o)) => o == Greater,
            (CmpOp::Ge, Some(o)) => o != Less,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Number(String),
    Text(Vec<u8>),
    Hex(Vec<u8>),
    Op(CmpOp),
    Arith(ArithOp),
    Open,
    Close,
    And,
    Or,
    Not,
    If,
    Then,
    Else,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Word(w) | Token::Number(w) => write!(f, "'{w}'"),
            Token::Text(t) => write!(f, "'{}'", String::from_utf8_lossy(t)),
            Token::Hex(_) => f.write_str("a hex constant"),
            Token::Op(op) => write!(f, "'{op:?}'"),
            Token::Arith(op) => write!(f, "'{op:?}'"),
            Token::If => f.write_str("'if'"),
            Token::Then => f.write_str("'then'"),
            Token::Else => f.write_str("'else'"),
            Token::Open => f.write_str("'('"),
            Token::Close => f.write_str("')'"),
            Token::And => f.write_str("'and'"),
            Token::Or => f.write_str("'or'"),
            Token::Not => f.write_str("'not'"),
        }
    }
}

/// Parses a condition; the error says what is wrong, in words for a message.
pub fn parse(text: &str) -> Result<Expr, String> {
    let mut p = Parser::of(text, "condition")?;
    let e = p.or()?;
    p.end(e, "condition")
}

/// Parses a value (a derived field's); the error says what is wrong.
pub fn parse_value(text: &str) -> Result<Value, String> {
    let mut p = Parser::of(text, "value")?;
    let v = p.value()?;
    p.end(v, "value")
}

/// The words of the language that are not names.
fn word_token(w: &str) -> Option<Token> {
    Some(match w.to_ascii_lowercase().as_str() {
        "and" => Token::And,
        "or" => Token::Or,
        "not" => Token::Not,
        "eq" => Token::Op(CmpOp::Eq),
        "ne" => Token::Op(CmpOp::Ne),
        "lt" => Token::Op(CmpOp::Lt),
        "le" => Token::Op(CmpOp::Le),
        "gt" => Token::Op(CmpOp::Gt),
        "ge" => Token::Op(CmpOp::Ge),
        "if" => Token::If,
        "then" => Token::Then,
        "else" => Token::Else,
        _ => return None,
    })
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        // A sign starts a number where an operand is expected (not after one).
        let operand_expected =
            !matches!(out.last(), Some(Token::Word(_) | Token::Number(_) | Token::Text(_) | Token::Hex(_) | Token::Close));
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'(' => (out.push(Token::Open), i += 1).1,
            b')' => (out.push(Token::Close), i += 1).1,
            b'\'' | b'"' => {
                let (bytes, next) = quoted(text, i)?;
                out.push(Token::Text(bytes));
                i = next;
            }
            b'x' | b'X' if b.get(i + 1) == Some(&b'\'') => {
                let (bytes, next) = quoted(text, i + 1)?;
                out.push(Token::Hex(hex(&bytes)?));
                i = next;
            }
            b'0'..=b'9' | b'.' => i = number(text, i, &mut out),
            b'+' | b'-' if operand_expected && b.get(i + 1).is_some_and(|d| d.is_ascii_digit() || *d == b'.') => {
                i = number(text, i, &mut out)
            }
            b'+' => (out.push(Token::Arith(ArithOp::Add)), i += 1).1,
            b'-' => (out.push(Token::Arith(ArithOp::Sub)), i += 1).1,
            b'*' => (out.push(Token::Arith(ArithOp::Mul)), i += 1).1,
            b'/' => (out.push(Token::Arith(ArithOp::Div)), i += 1).1,
            b'&' if b.get(i + 1) == Some(&b'&') => (out.push(Token::And), i += 2).1,
            b'|' if b.get(i + 1) == Some(&b'|') => (out.push(Token::Or), i += 2).1,
            b'=' | b'!' | b'<' | b'>' => {
                let two = b.get(i + 1).copied();
                let (tok, len) = match (c, two) {
                    (b'=', Some(b'=')) => (Token::Op(CmpOp::Eq), 2),
                    (b'=', _) => (Token::Op(CmpOp::Eq), 1),
                    (b'!', Some(b'=')) | (b'<', Some(b'>')) => (Token::Op(CmpOp::Ne), 2),
                    (b'!', _) => (Token::Not, 1),
                    (b'<', Some(b'=')) => (Token::Op(CmpOp::Le), 2),
                    (b'<', _) => (Token::Op(CmpOp::Lt), 1),
                    (b'>', Some(b'=')) => (Token::Op(CmpOp::Ge), 2),
                    _ => (Token::Op(CmpOp::Gt), 1),
                };
                out.push(tok);
                i += len;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let end = b[i..].iter().position(|c| !(c.is_ascii_alphanumeric() || *c == b'_')).map_or(b.len(), |n| i + n);
                let w = &text[i..end];
                out.push(word_token(w).unwrap_or_else(|| Token::Word(w.to_string())));
                i = end;
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err(format!("'{ch}' has no meaning in a condition"));
            }
        }
    }
    Ok(out)
}

/// A number from `at`: `[+-]digits[.digits]`.
fn number(text: &str, at: usize, out: &mut Vec<Token>) -> usize {
    let b = text.as_bytes();
    let mut end = at + 1;
    while end < b.len() && (b[end].is_ascii_digit() || b[end] == b'.') {
        end += 1;
    }
    out.push(Token::Number(text[at..end].to_string()));
    end
}

/// The text between the quote at `at` and the same quote closing it, escapes resolved; and where
/// the text after it starts.
fn quoted(text: &str, at: usize) -> Result<(Vec<u8>, usize), String> {
    let b = text.as_bytes();
    let q = b[at];
    let mut out = Vec::new();
    let mut i = at + 1;
    while i < b.len() {
        match b[i] {
            c if c == q => return Ok((out, i + 1)),
            b'\\' if i + 1 < b.len() => {
                let (byte, len) = match b[i + 1] {
                    b'n' => (b'\n', 2),
                    b't' => (b'\t', 2),
                    b'r' => (b'\r', 2),
                    b'0' => (0, 2),
                    b'x' => {
                        let digits = text.get(i + 2..i + 4).filter(|d| d.bytes().all(|c| c.is_ascii_hexdigit()));
                        let d = digits.ok_or_else(|| format!("'\\x' needs two hex digits, in {}", &text[at..]))?;
                        (u8::from_str_radix(d, 16).unwrap_or(0), 4)
                    }
                    c => (c, 2),
                };
                out.push(byte);
                i += len;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err(format!("the quote that opens {} does not close", &text[at..]))
}

/// The bytes of `x'...'`'s digits.
fn hex(digits: &[u8]) -> Result<Vec<u8>, String> {
    let text = String::from_utf8_lossy(digits);
    if digits.is_empty() || !digits.len().is_multiple_of(2) || !digits.iter().all(u8::is_ascii_hexdigit) {
        return Err(format!("x'{text}' is not a hex constant: write an even number of hex digits, as in x'0a1f'"));
    }
    Ok(digits.chunks(2).map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap_or("0"), 16).unwrap_or(0)).collect())
}

/// The deepest a condition or value may nest (parentheses, `not`, `if`, a minus): deeper text is
/// refused rather than risking the stack.
pub const MAX_NESTING: usize = 100;

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    /// How deep the parse is (see [`MAX_NESTING`]).
    depth: usize,
    /// The value that starts at each token where one was tried for a parenthesis (its end), or
    /// None where none does: a parenthesis is tried as a value first, then as a condition, and
    /// without this, nested ones would be tried again and again.
    tried: std::collections::HashMap<usize, Option<(Value, usize)>>,
}

impl Parser {
    fn of(text: &str, what: &str) -> Result<Parser, String> {
        let tokens = tokenize(text)?;
        if tokens.is_empty() {
            return Err(format!("the {what} is empty"));
        }
        Ok(Parser { tokens, at: 0, depth: 0, tried: std::collections::HashMap::new() })
    }

    /// `parsed`, when nothing follows it.
    fn end<T>(&self, parsed: T, what: &str) -> Result<T, String> {
        match self.tokens.get(self.at) {
            None => Ok(parsed),
            Some(t) => Err(format!("{t} cannot follow a complete {what} (a missing operator, or an extra ')')")),
        }
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut e = self.and()?;
        while self.peek() == Some(&Token::Or) {
            self.at += 1;
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        while self.peek() == Some(&Token::And) {
            self.at += 1;
            e = Expr::And(Box::new(e), Box::new(self.unary()?));
        }
        Ok(e)
    }

    /// `f`, one level deeper.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, String>) -> Result<T, String> {
        if self.depth >= MAX_NESTING {
            return Err(format!("it nests more than {MAX_NESTING} deep"));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn unary(&mut self) -> Result<Expr, String> {
        self.nested(Self::unary_here)
    }

    fn unary_here(&mut self) -> Result<Expr, String> {
        match self.peek() {
            Some(Token::Not) => {
                self.at += 1;
                Ok(Expr::Not(Box::new(self.unary()?)))
            }
            Some(Token::Open) => {
                // A parenthesized value compared (`(a + b) gt 3`), or a condition in parentheses.
                let start = self.at;
                if let Some((left, end)) = self.value_at(start) {
                    if let Some(Token::Op(op)) = self.tokens.get(end) {
                        let op = *op;
                        self.at = end + 1;
                        if self.peek().is_none() {
                            return Err("a comparison ends without its right side".into());
                        }
                        return Ok(Expr::Compare(left, op, self.value()?));
                    }
                }
                self.at = start + 1;
                let e = self.or()?;
                self.close(e)
            }
            Some(_) => self.test(),
            None => Err("the condition ends where a test was expected".into()),
        }
    }

    /// The value that starts at token `start` and where it ends, if one does (tried once per
    /// token).
    fn value_at(&mut self, start: usize) -> Option<(Value, usize)> {
        if let Some(tried) = self.tried.get(&start) {
            return tried.clone();
        }
        self.at = start;
        let found = self.value().ok().map(|v| (v, self.at));
        self.tried.insert(start, found.clone());
        found
    }

    /// `inner`, when a ')' follows it.
    fn close<T>(&mut self, inner: T) -> Result<T, String> {
        match self.next() {
            Some(Token::Close) => Ok(inner),
            Some(t) => Err(format!("expected ')' but found {t}")),
            None => Err("a '(' does not close".into()),
        }
    }

    /// A comparison, a match, or a lone name (another condition).
    fn test(&mut self) -> Result<Expr, String> {
        let left = self.value()?;
        match self.peek() {
            Some(Token::Op(op)) => {
                let op = *op;
                self.at += 1;
                if self.peek().is_none() {
                    return Err("a comparison ends without its right side".into());
                }
                Ok(Expr::Compare(left, op, self.value()?))
            }
            Some(Token::Word(w)) if w.eq_ignore_ascii_case("matches") => {
                self.at += 1;
                let Value::Operand(left) = left else { return Err("'matches' tests a field, as in name matches '^A'".into()) };
                match self.next() {
                    Some(Token::Text(t)) => {
                        let pattern = String::from_utf8(t).map_err(|_| "a regular expression must be UTF-8 text".to_string())?;
                        Ok(Expr::Matches(left, pattern))
                    }
                    _ => Err("'matches' needs a quoted regular expression, as in name matches '^A[0-9]+'".into()),
                }
            }
            _ => match left {
                Value::Operand(Operand::Field(name)) => Ok(Expr::Named(name)),
                _ => Err("a value alone is not a condition: compare it, as in amount gt 0".into()),
            },
        }
    }

    /// `if C then A else B`, or a sum.
    fn value(&mut self) -> Result<Value, String> {
        if self.peek() != Some(&Token::If) {
            return self.sum();
        }
        self.at += 1;
        let cond = self.or()?;
        self.keyword(Token::Then)?;
        let then = self.value()?;
        self.keyword(Token::Else)?;
        Ok(Value::If(Box::new(cond), Box::new(then), Box::new(self.value()?)))
    }

    fn keyword(&mut self, want: Token) -> Result<(), String> {
        match self.next() {
            Some(t) if t == want => Ok(()),
            Some(t) => Err(format!("expected {want} but found {t}")),
            None => Err(format!("expected {want} but the text ends")),
        }
    }

    fn sum(&mut self) -> Result<Value, String> {
        let mut v = self.product()?;
        while let Some(Token::Arith(op @ (ArithOp::Add | ArithOp::Sub))) = self.peek() {
            let op = *op;
            self.at += 1;
            v = Value::Arith(Box::new(v), op, Box::new(self.product()?));
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<Value, String> {
        let mut v = self.factor()?;
        while let Some(Token::Arith(op @ (ArithOp::Mul | ArithOp::Div))) = self.peek() {
            let op = *op;
            self.at += 1;
            v = Value::Arith(Box::new(v), op, Box::new(self.factor()?));
        }
        Ok(v)
    }

    fn factor(&mut self) -> Result<Value, String> {
        self.nested(Self::factor_here)
    }

    fn factor_here(&mut self) -> Result<Value, String> {
        match self.next() {
            Some(Token::Arith(ArithOp::Sub)) => Ok(Value::Neg(Box::new(self.factor()?))),
            Some(Token::Open) => {
                let v = self.value()?;
                self.close(v)
            }
            Some(t) => Ok(Value::Operand(operand(t)?)),
            None => Err("the text ends where a value was expected".into()),
        }
    }
}

fn operand(t: Token) -> Result<Operand, String> {
    Ok(match t {
        Token::Word(w) => Operand::Field(w),
        Token::Number(n) => Operand::Number(n),
        Token::Text(t) => Operand::Text(t),
        Token::Hex(h) => Operand::Hex(h),
        other => return Err(format!("expected a field or a constant but found {other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(n: &str) -> Value {
        Value::Operand(Operand::Field(n.into()))
    }

    fn num(n: &str) -> Value {
        Value::Operand(Operand::Number(n.into()))
    }

    fn cmp(l: Value, op: CmpOp, r: Value) -> Expr {
        Expr::Compare(l, op, r)
    }

    fn arith(l: Value, op: ArithOp, r: Value) -> Value {
        Value::Arith(Box::new(l), op, Box::new(r))
    }

    #[test]
    fn precedence_and_forms() {
        let e = parse("a eq 1 or not (b>=-2.5 && c != 'x y') and d matches '^A'").unwrap();
        assert_eq!(
            e,
            Expr::Or(
                Box::new(cmp(f("a"), CmpOp::Eq, num("1"))),
                Box::new(Expr::And(
                    Box::new(Expr::Not(Box::new(Expr::And(
                        Box::new(cmp(f("b"), CmpOp::Ge, num("-2.5"))),
                        Box::new(cmp(f("c"), CmpOp::Ne, Value::Operand(Operand::Text(b"x y".to_vec()))))
                    )))),
                    Box::new(Expr::Matches(Operand::Field("d".into()), "^A".into()))
                ))
            )
        );
        assert_eq!(parse("k = x'0aFF'").unwrap(), cmp(f("k"), CmpOp::Eq, Value::Operand(Operand::Hex(vec![10, 255]))));
        assert_eq!(parse("other").unwrap(), Expr::Named("other".into()));
        assert_eq!(parse("a <> \"q\\'\\x41\"").unwrap(), cmp(f("a"), CmpOp::Ne, Value::Operand(Operand::Text(b"q'A".to_vec()))));
    }

    #[test]
    fn arithmetic_and_choices() {
        // Products before sums, left to right; a sign on a number, a minus before a name.
        assert_eq!(
            parse_value("a - -1 * b / 2 + -c").unwrap(),
            arith(
                arith(f("a"), ArithOp::Sub, arith(arith(num("-1"), ArithOp::Mul, f("b")), ArithOp::Div, num("2"))),
                ArithOp::Add,
                Value::Neg(Box::new(f("c")))
            )
        );
        assert_eq!(parse("(a + b) gt 3").unwrap(), cmp(arith(f("a"), ArithOp::Add, f("b")), CmpOp::Gt, num("3")));
        assert_eq!(parse("(a gt 3)").unwrap(), cmp(f("a"), CmpOp::Gt, num("3")));
        assert_eq!(
            parse_value("if a gt 1 then a else 0").unwrap(),
            Value::If(Box::new(cmp(f("a"), CmpOp::Gt, num("1"))), Box::new(f("a")), Box::new(num("0")))
        );
        assert!(parse_value("if a then 1").unwrap_err().contains("expected 'else'"));
        assert!(parse_value("1 +").unwrap_err().contains("ends where a value"));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert!(parse("").unwrap_err().contains("empty"));
        assert!(parse("(a eq 1").unwrap_err().contains("does not close"));
        assert!(parse("a eq 1)").unwrap_err().contains("cannot follow"));
        assert!(parse("a eq").unwrap_err().contains("right side"));
        assert!(parse("a eq 'x").unwrap_err().contains("does not close"));
        assert!(parse("a eq x'123'").unwrap_err().contains("even number"));
        assert!(parse("5").unwrap_err().contains("value alone"));
        assert!(parse("a matches b").unwrap_err().contains("quoted regular expression"));
        assert!(parse("a eq 1 b eq 2").unwrap_err().contains("cannot follow"));
        assert!(parse("a eq 1 ; b").unwrap_err().contains("no meaning"));
    }
}
