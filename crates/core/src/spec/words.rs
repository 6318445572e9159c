//! The vocabulary of the statement language: the keyword and option-word tables, each a list
//! of (spelling, meaning) with aliases sharing a meaning, and the case-insensitive, prefix-tolerant
//! lookup that resolves a word against one of them; also the split of a spec into its words.

use super::{Endian, FieldType, Method};

/// One statement as written, with the blanks and line breaks inside it removed, and the line
/// (from 1) where it starts.
pub(super) struct Written {
    pub(super) text: String,
    pub(super) line: usize,
}

/// The statements of a spec, without comments. Statements are separated by blanks and line
/// breaks, except after a comma: Nsort's own examples write `transfer_size=16M, count=64` and
/// break long statements across lines after a comma, so a word that follows a word ending with
/// ',' (or that starts with ',') continues the statement, unless it starts with '-' (a new
/// statement: the comma before it is then an empty option, reported as such). Like the shell,
/// only a '#' that starts a word opens a comment (to the end of its line), so '#' inside a path is
/// kept; a comment may sit between the lines of a continued statement.
///
/// A blank may also stand for the underscore of a keyword of two words, as the NTOSort lines of
/// the Sort Benchmark papers print them (`-in file=IN,transfer size=16M, count=64`): a word that
/// does not start a statement and whose first word, after the statement's last word and an
/// underscore, spells such a keyword ([`TWO_WORD_KEYWORDS`]) continues the statement. Any other
/// word stays apart (and is refused as no statement).
pub(super) fn statements(text: &str) -> Vec<Written> {
    let mut out: Vec<Written> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        // Where the previous word of this line ended.
        let mut after: Option<usize> = None;
        for (start, word) in words(line) {
            let end = start + word.len();
            let open = out.last().and_then(|last| unclosed(&last.text));
            match out.last_mut() {
                // Inside quotes the text of the line is taken as written, blanks and '#' included
                // (a quote does not go on past the end of its line).
                Some(last) if open == Some(Nesting::Quote) && after.is_some() => {
                    last.text.push_str(&line[after.unwrap_or(start)..end]);
                }
                // Inside a condition's parentheses, blanks and line breaks separate its words; '#'
                // still starts a comment.
                Some(last) if open.is_some() && !word.starts_with('#') => {
                    last.text.push(' ');
                    last.text.push_str(word);
                }
                _ if word.starts_with('#') => break,
                Some(last) if (last.text.ends_with(',') || word.starts_with(',')) && !word.starts_with('-') => last.text.push_str(word),
                Some(last) if !word.starts_with('-') && spells_two_word_keyword(&last.text, word) => {
                    last.text.push('_');
                    last.text.push_str(word);
                }
                _ => out.push(Written { text: word.to_string(), line: i + 1 }),
            }
            after = Some(end);
        }
    }
    out
}

/// The words of a line (runs of non-whitespace) with their byte offsets.
fn words(line: &str) -> impl Iterator<Item = (usize, &str)> {
    line.split_whitespace().map(move |w| (w.as_ptr() as usize - line.as_ptr() as usize, w))
}

/// What is still open at the end of a statement.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Nesting {
    /// A parenthesis.
    Parenthesis,
    /// A quote (inside parentheses).
    Quote,
}

/// Whether a statement has a parenthesis or a quote after its first '(' still open: a condition
/// (`test:(a eq 'x y')`) goes on past blanks, and past line breaks, until they close. Quotes count
/// only after a '(' so that a quote in a path or a name (`O'Brien`) is taken as written.
fn unclosed(statement: &str) -> Option<Nesting> {
    let open = statement.find('(')?;
    let mut quote = false;
    nesting(&statement[open..], |_, _| {}, &mut quote).then_some(if quote { Nesting::Quote } else { Nesting::Parenthesis })
}

/// Walks `text` through its parentheses and quotes (`'` or `"`, in which `\` escapes the next
/// character), calling `outside(index, c)` for each character outside both; returns whether a
/// parenthesis or a quote is still open at the end, and sets `in_quote` when a quote is.
pub(super) fn nesting(text: &str, mut outside: impl FnMut(usize, char), in_quote: &mut bool) -> bool {
    let (mut depth, mut quote, mut escaped) = (0usize, None, false);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(_), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, c) if depth == 0 => outside(i, c),
            _ => {}
        }
        escaped = false;
    }
    *in_quote = quote.is_some();
    depth > 0 || quote.is_some()
}

/// Nsort's keywords of two words joined by an underscore.
const TWO_WORD_KEYWORDS: [&str; 10] = [
    "in_file",
    "out_file",
    "temp_file",
    "temp_dir",
    "transfer_size",
    "maximum_size",
    "record_size",
    "record_delimiter",
    "big_endian",
    "little_endian",
];

/// Whether the last word of `statement` and the first of `word`, joined by an underscore, spell
/// one of [`TWO_WORD_KEYWORDS`].
fn spells_two_word_keyword(statement: &str, word: &str) -> bool {
    let marks: &[char] = &['-', ',', '=', ':'];
    let last = statement.rsplit(marks).next().unwrap_or("");
    let first = word.split(marks).next().unwrap_or("");
    !last.is_empty() && !first.is_empty() && TWO_WORD_KEYWORDS.contains(&format!("{last}_{first}").to_ascii_lowercase().as_str())
}

// ---------------------------------------------------------------------
// Word tables and prefix matching

/// The result of looking a word up in a table of spellings.
pub(super) enum Match<T> {
    One(T),
    Unknown,
    /// The candidates, each by the first of its spellings the word begins.
    Ambiguous(Vec<&'static str>),
}

/// Looks `word` up case-insensitively: an exact spelling wins, else a
/// prefix of spellings that all mean the same thing. Aliases share a
/// value, so `-temp` vs `-temp_dir` is not ambiguous.
pub(super) fn lookup<T: Copy + PartialEq>(table: &[(&'static str, T)], word: &str) -> Match<T> {
    let word = word.to_ascii_lowercase();
    if let Some(&(_, v)) = table.iter().find(|(s, _)| *s == word) {
        return Match::One(v);
    }
    if word.is_empty() {
        return Match::Unknown;
    }
    // Each meaning once, by the first of its spellings that the word begins.
    let mut hits: Vec<(T, &'static str)> = Vec::new();
    for &(spelling, v) in table.iter().filter(|(s, _)| s.starts_with(&word)) {
        if !hits.iter().any(|&(h, _)| h == v) {
            hits.push((v, spelling));
        }
    }
    match hits.as_slice() {
        [] => Match::Unknown,
        [(v, _)] => Match::One(*v),
        _ => Match::Ambiguous(hits.iter().map(|&(_, spelling)| spelling).collect()),
    }
}

/// The first spelling of `v` in the table, which is its canonical name.
pub(super) fn canonical<T: PartialEq>(table: &[(&'static str, T)], v: T) -> &'static str {
    table.iter().find(|(_, t)| *t == v).map_or("?", |(s, _)| s)
}

/// The canonical spellings of a table, each prefixed by `prefix`.
pub(super) fn canonical_names<T: Copy + PartialEq>(table: &[(&'static str, T)], prefix: &str) -> Vec<String> {
    let mut seen: Vec<T> = Vec::new();
    let mut names = Vec::new();
    for &(s, v) in table {
        if !seen.contains(&v) {
            seen.push(v);
            names.push(format!("{prefix}{s}"));
        }
    }
    names
}

/// "a, b or c".
pub(super) fn or_list<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [rest @ .., last] => {
            let head: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} or {}", head.join(", "), last.as_ref())
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keyword {
    Processes,
    Memory,
    Method,
    Touch,
    NoTouch,
    Statistics,
    NoStatistics,
    NoWarn,
    Format,
    Field,
    Key,
    InFile,
    OutFile,
    TempFile,
    Duplicates,
    NoDuplicates,
    Summarize,
    Specification,
    Condition,
    Include,
    Omit,
    Reformat,
    Merge,
    Derived,
    Match,
}

pub(super) const KEYWORDS: &[(&str, Keyword)] = &[
    ("processes", Keyword::Processes),
    // Nsort clients add `-threads=N` to every definition.
    ("threads", Keyword::Processes),
    ("memory", Keyword::Memory),
    ("method", Keyword::Method),
    ("touch", Keyword::Touch),
    ("notouch", Keyword::NoTouch),
    ("statistics", Keyword::Statistics),
    ("nostatistics", Keyword::NoStatistics),
    ("nowarn", Keyword::NoWarn),
    ("format", Keyword::Format),
    ("field", Keyword::Field),
    ("key", Keyword::Key),
    ("in_file", Keyword::InFile),
    // Spelled out so that `-in` stays `-in_file` now that `-include` shares the prefix.
    ("in", Keyword::InFile),
    ("out_file", Keyword::OutFile),
    ("temp_file", Keyword::TempFile),
    ("temp", Keyword::TempFile),
    ("tempdir", Keyword::TempFile),
    ("temp_dir", Keyword::TempFile),
    ("duplicates", Keyword::Duplicates),
    ("noduplicates", Keyword::NoDuplicates),
    ("summarize", Keyword::Summarize),
    ("specification", Keyword::Specification),
    ("condition", Keyword::Condition),
    ("include", Keyword::Include),
    ("omit", Keyword::Omit),
    ("reformat", Keyword::Reformat),
    ("merge", Keyword::Merge),
    ("derived", Keyword::Derived),
    // SUMP Pump's directive for Nsort: each output record preceded by whether its keys match.
    ("match", Keyword::Match),
];

pub(super) const METHODS: &[(&str, Method)] = &[("radix", Method::Radix), ("merge", Method::Merge)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FormatWord {
    RecordSize,
    Delimiter,
    MaximumSize,
    Separator,
}

pub(super) const FORMAT_WORDS: &[(&str, FormatWord)] = &[
    ("size", FormatWord::RecordSize),
    ("record_size", FormatWord::RecordSize),
    ("delimiter", FormatWord::Delimiter),
    ("record_delimiter", FormatWord::Delimiter),
    ("maximum_size", FormatWord::MaximumSize),
    ("separator", FormatWord::Separator),
];

/// Words of `-field` and `-key` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum LayoutWord {
    Name,
    /// The first byte, counted from 0 (`offset`, `off`).
    Offset,
    /// The first byte, counted from 1 (`position`), as Nsort counts it.
    Position,
    Size,
    Type(FieldType),
    Endian(Endian),
    Descending(bool),
    Delimiter,
    /// The longest a field of separated records may be (accepted, not enforced).
    MaximumSize,
    /// `compare=NAME`: the field or key is ordered by a declared comparison function.
    Compare,
}

impl LayoutWord {
    pub(super) fn takes_value(self) -> bool {
        matches!(
            self,
            LayoutWord::Name
                | LayoutWord::Offset
                | LayoutWord::Position
                | LayoutWord::Size
                | LayoutWord::Delimiter
                | LayoutWord::MaximumSize
                | LayoutWord::Compare
        )
    }
}

pub(super) const LAYOUT_WORDS: &[(&str, LayoutWord)] = &[
    ("name", LayoutWord::Name),
    ("offset", LayoutWord::Offset),
    ("off", LayoutWord::Offset),
    ("position", LayoutWord::Position),
    ("size", LayoutWord::Size),
    ("character", LayoutWord::Type(FieldType::Character)),
    ("integer", LayoutWord::Type(FieldType::Integer)),
    ("int", LayoutWord::Type(FieldType::Integer)),
    ("unsigned", LayoutWord::Type(FieldType::Unsigned)),
    ("float", LayoutWord::Type(FieldType::Float)),
    ("double", LayoutWord::Type(FieldType::Double)),
    ("decimal", LayoutWord::Type(FieldType::Decimal)),
    ("packed", LayoutWord::Type(FieldType::Packed)),
    ("zoned", LayoutWord::Type(FieldType::Zoned)),
    ("month", LayoutWord::Type(FieldType::Month)),
    ("big_endian", LayoutWord::Endian(Endian::Big)),
    ("little_endian", LayoutWord::Endian(Endian::Little)),
    ("delimiter", LayoutWord::Delimiter),
    ("ascending", LayoutWord::Descending(false)),
    ("descending", LayoutWord::Descending(true)),
    ("maximum_size", LayoutWord::MaximumSize),
    ("compare", LayoutWord::Compare),
];

/// Words of file statement options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileWord {
    Direct(bool),
    TransferSize,
    Count,
    Preallocate,
    Sync,
    /// `-out_file=PATH,append`: the sorted records go at the end of the file.
    Append,
}

impl FileWord {
    pub(super) fn takes_value(self) -> bool {
        matches!(self, FileWord::TransferSize | FileWord::Count)
    }
}

pub(super) const FILE_WORDS: &[(&str, FileWord)] = &[
    ("direct", FileWord::Direct(true)),
    ("buffered", FileWord::Direct(false)),
    ("nodirect", FileWord::Direct(false)),
    ("transfer_size", FileWord::TransferSize),
    ("count", FileWord::Count),
    ("preallocate", FileWord::Preallocate),
    ("sync", FileWord::Sync),
    ("append", FileWord::Append),
];
