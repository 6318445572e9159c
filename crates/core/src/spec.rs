//! Nsort's statement language, as given to `xsort --spec 'STATEMENTS'`
//! (and later to the C API, as Nsort's subroutine library took statement
//! strings). [`parse_spec`] turns the text into an [`NsortSpec`]; the CLI
//! maps that onto the sorter's configuration and rejects what it cannot
//! do yet (typed keys, for instance).
//!
//! # Grammar
//!
//! ```text
//! spec       := { statement | comment }        separated by whitespace/newlines
//! comment    := '#' ... end of line            ('#' must start a word)
//! statement  := '-' KEYWORD [ ('=' | ':') VALUE ]
//! VALUE      := item { ',' item }
//! item       := WORD [ ('=' | ':') TEXT ]
//! ```
//!
//! Keywords and option words are case-insensitive and may be shortened to
//! any unambiguous prefix (`-mem`, `-stat`, `-proc`, `off`, `siz`); an
//! exact spelling always wins over a prefix (`-temp` is exact). Paths,
//! field names and numbers are taken as written. A statement cannot
//! contain whitespace, so neither can a path; a path cannot contain a
//! comma either, because commas separate options.
//!
//! # Statements
//!
//! | statement | meaning |
//! |---|---|
//! | `-processes=N` | worker threads, N >= 1 |
//! | `-memory=SIZE` | memory budget: `124000M`, `2G`, `50%`; a bare number is MiB (see [`crate::size`]) |
//! | `-method=radix\|merge` | in-memory sort method |
//! | `-touch` / `-notouch` | pre-fault memory before the sort, or not |
//! | `-statistics` / `-nostatistics` | print statistics at the end, or not |
//! | `-format=size:N` (or `record_size:N`) | fixed-size records of N bytes |
//! | `-field=name:NAME,size:N,offset:N[,TYPE][,ENDIAN]` | a named field in the record |
//! | `-key=NAME[,ascending\|descending]` | sort on a field (keys in priority order) |
//! | `-key=position:OFF,size:N[,TYPE][,ENDIAN][,descending]` | sort on bytes not named by a field |
//! | `-in_file=PATH[,OPTS]` | an input file; may repeat |
//! | `-out_file=PATH[,OPTS]` | the output file; at most once |
//! | `-temp_file=DIR[,OPTS]` (also `-temp`, `-tempdir`, `-temp_dir`) | a temporary directory; may repeat |
//!
//! Field and key words: `offset` (also `off`, `position`), `size`, the
//! types `character` (the default), `integer` (`int`), `unsigned`, `float`,
//! `double`, `decimal`, and the byte orders `big_endian`, `little_endian`
//! (binary numbers only; when absent the consumer chooses, Nsort used the
//! machine's order). Binary numbers have default sizes (integer and
//! unsigned 4, of 1, 2, 4 or 8; float 4; double 8); character and decimal
//! fields need `size`. A field's offset defaults to the end of the
//! previous `-field` (0 for the first), so contiguous fields can omit it.
//! A `-key` whose first item is a bare word and which has no `word:value`
//! item names a field (`-key=key,descending`); otherwise all its items are
//! options, `name:NAME` included.
//!
//! File options: `direct`, `buffered` (also `nodirect`),
//! `transfer_size=SIZE` (a bare number is bytes; at least 4 KiB and a
//! multiple of 4 KiB, to keep direct I/O aligned), `count=N` (I/Os in
//! flight, N >= 1), and for output and temporary files `preallocate` and
//! `sync`.
//!
//! A later statement overrides an earlier one (`-touch -notouch` means
//! no touch), except that `-field`, `-key`, `-in_file` and `-temp_file`
//! accumulate and a second `-out_file` is an error. Statements may come
//! in any order: fields, keys and the record size are checked against
//! each other once the whole spec is read.

use std::fmt;
use std::path::PathBuf;

use thiserror::Error;

use crate::size::{self, MemorySize, SizeError};

/// The in-memory sort method (`-method=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Radix sort of normalized key prefixes.
    Radix,
    /// Comparison merge sort.
    Merge,
}

/// How the bytes of a field or key are interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Raw bytes compared as unsigned bytes (Nsort's default).
    Character,
    /// Two's-complement signed binary integer (1, 2, 4 or 8 bytes).
    Integer,
    /// Unsigned binary integer (1, 2, 4 or 8 bytes).
    Unsigned,
    /// IEEE 754 single precision (4 bytes).
    Float,
    /// IEEE 754 double precision (8 bytes).
    Double,
    /// A decimal number written as text.
    Decimal,
}

impl FieldType {
    /// The Nsort spelling, for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::Character => "character",
            FieldType::Integer => "integer",
            FieldType::Unsigned => "unsigned",
            FieldType::Float => "float",
            FieldType::Double => "double",
            FieldType::Decimal => "decimal",
        }
    }

    /// Whether the type is a binary number, the only kind with a byte order.
    pub fn is_binary_number(self) -> bool {
        !matches!(self, FieldType::Character | FieldType::Decimal)
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Byte order of a binary number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Most significant byte first (`big_endian`).
    Big,
    /// Least significant byte first (`little_endian`).
    Little,
}

/// A named field of a fixed-size record (`-field=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDef {
    /// The name that `-key=NAME` refers to (case-sensitive).
    pub name: String,
    /// Byte offset from the start of the record.
    pub offset: usize,
    /// Length in bytes (at least 1).
    pub size: usize,
    /// How the bytes are interpreted.
    pub field_type: FieldType,
    /// Byte order; only ever `Some` for binary numbers.
    pub endian: Option<Endian>,
}

/// One sort key (`-key=`), resolved to its bytes in the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDef {
    /// The field the key names, or `None` for the `position:` form.
    pub field: Option<String>,
    /// Byte offset from the start of the record.
    pub offset: usize,
    /// Length in bytes (at least 1).
    pub size: usize,
    /// How the bytes are compared.
    pub field_type: FieldType,
    /// Byte order; only ever `Some` for binary numbers.
    pub endian: Option<Endian>,
    /// Sort this key from high to low.
    pub descending: bool,
}

/// A file or directory statement with its I/O options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSpec {
    /// The path as written.
    pub path: PathBuf,
    /// `Some(true)` for `direct`, `Some(false)` for `buffered`/`nodirect`,
    /// `None` when the statement does not say.
    pub direct: Option<bool>,
    /// Bytes per I/O request: at least 4096 and a multiple of 4096.
    pub transfer_size: Option<u64>,
    /// I/O requests kept in flight, at least 1.
    pub count: Option<usize>,
    /// Reserve the file's full size before writing (output and temp only).
    pub preallocate: bool,
    /// Flush to stable storage before finishing (output and temp only).
    pub sync: bool,
}

/// Everything a spec said. `None` or empty means "not said": the
/// consumer applies its own defaults.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NsortSpec {
    /// `-processes=N`.
    pub processes: Option<usize>,
    /// `-memory=SIZE`.
    pub memory: Option<MemorySize>,
    /// `-method=`.
    pub method: Option<Method>,
    /// `-touch` (true) or `-notouch` (false).
    pub touch: Option<bool>,
    /// `-statistics` (true) or `-nostatistics` (false).
    pub statistics: Option<bool>,
    /// `-format=size:N`: fixed record size in bytes.
    pub record_size: Option<usize>,
    /// `-field` statements in the order written.
    pub fields: Vec<FieldDef>,
    /// `-key` statements in priority order (first is most significant).
    pub keys: Vec<KeyDef>,
    /// `-in_file` statements in the order written.
    pub in_files: Vec<FileSpec>,
    /// `-out_file`.
    pub out_file: Option<FileSpec>,
    /// `-temp_file` statements in the order written.
    pub temp_dirs: Vec<FileSpec>,
}

/// A spec that could not be parsed. Every message quotes the statement as
/// written and is meant to be shown to the user as is.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SpecError {
    /// A word that does not start with '-'.
    #[error(
        "'{token}' is not an Nsort statement: statements start with a single '-', as in -memory=1G"
    )]
    NotAStatement {
        /// The word as written.
        token: String,
    },
    /// A keyword that matches no statement.
    #[error("unknown statement '{statement}': expected one of {expected}")]
    UnknownStatement {
        /// The statement as written.
        statement: String,
        /// The statements that exist.
        expected: String,
    },
    /// A keyword prefix that matches several statements.
    #[error("ambiguous statement '{statement}': '-{keyword}' could be {candidates}")]
    AmbiguousStatement {
        /// The statement as written.
        statement: String,
        /// The keyword as written.
        keyword: String,
        /// The statements it could mean.
        candidates: String,
    },
    /// An option word (or value word such as a method) that matches nothing.
    #[error(
        "invalid statement '{statement}': unknown {what} '{word}'; expected one of {expected}"
    )]
    UnknownWord {
        /// The statement as written.
        statement: String,
        /// What kind of word was expected, e.g. "file option".
        what: String,
        /// The word as written.
        word: String,
        /// The words that exist here.
        expected: String,
    },
    /// An option word prefix that matches several words.
    #[error(
        "invalid statement '{statement}': {what} '{word}' is ambiguous; it could be {candidates}"
    )]
    AmbiguousWord {
        /// The statement as written.
        statement: String,
        /// What kind of word was expected.
        what: String,
        /// The word as written.
        word: String,
        /// The words it could mean.
        candidates: String,
    },
    /// A size that did not parse.
    #[error("invalid statement '{statement}': {error}")]
    Size {
        /// The statement as written.
        statement: String,
        /// Why the size was rejected.
        error: SizeError,
    },
    /// Anything else wrong with a statement; `reason` says what.
    #[error("invalid statement '{statement}': {reason}")]
    Invalid {
        /// The statement as written.
        statement: String,
        /// What is wrong and, where it helps, what was expected.
        reason: String,
    },
}

type Result<T, E = SpecError> = std::result::Result<T, E>;

/// Parses a whole spec (any number of statements, comments, newlines).
/// Empty text gives `NsortSpec::default()`.
pub fn parse_spec(text: &str) -> Result<NsortSpec> {
    let mut builder = Builder::default();
    for word in words(text) {
        builder.apply(&Statement::split(word)?)?;
    }
    builder.finish()
}

/// The words of the spec, without comments. Like the shell, only a '#'
/// that starts a word opens a comment, so '#' inside a path is kept.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .flat_map(|line| line.split_whitespace().take_while(|w| !w.starts_with('#')))
}

// ---------------------------------------------------------------------
// Word tables and prefix matching

/// The result of looking a word up in a table of spellings.
enum Match<T> {
    One(T),
    Unknown,
    /// The canonical spellings of the candidates.
    Ambiguous(Vec<&'static str>),
}

/// Looks `word` up case-insensitively: an exact spelling wins, else a
/// prefix of spellings that all mean the same thing. Aliases share a
/// value, so `-temp` vs `-temp_dir` is not ambiguous.
fn lookup<T: Copy + PartialEq>(table: &[(&'static str, T)], word: &str) -> Match<T> {
    let word = word.to_ascii_lowercase();
    if let Some(&(_, v)) = table.iter().find(|(s, _)| *s == word) {
        return Match::One(v);
    }
    if word.is_empty() {
        return Match::Unknown;
    }
    let mut hits: Vec<T> = Vec::new();
    for &(_, v) in table.iter().filter(|(s, _)| s.starts_with(&word)) {
        if !hits.contains(&v) {
            hits.push(v);
        }
    }
    match hits.as_slice() {
        [] => Match::Unknown,
        [v] => Match::One(*v),
        _ => Match::Ambiguous(hits.iter().map(|v| canonical(table, *v)).collect()),
    }
}

/// The first spelling of `v` in the table, which is its canonical name.
fn canonical<T: PartialEq>(table: &[(&'static str, T)], v: T) -> &'static str {
    table.iter().find(|(_, t)| *t == v).map_or("?", |(s, _)| s)
}

/// The canonical spellings of a table, each prefixed by `prefix`.
fn canonical_names<T: Copy + PartialEq>(table: &[(&'static str, T)], prefix: &str) -> Vec<String> {
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
fn or_list<S: AsRef<str>>(items: &[S]) -> String {
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
enum Keyword {
    Processes,
    Memory,
    Method,
    Touch,
    NoTouch,
    Statistics,
    NoStatistics,
    Format,
    Field,
    Key,
    InFile,
    OutFile,
    TempFile,
}

const KEYWORDS: &[(&str, Keyword)] = &[
    ("processes", Keyword::Processes),
    ("memory", Keyword::Memory),
    ("method", Keyword::Method),
    ("touch", Keyword::Touch),
    ("notouch", Keyword::NoTouch),
    ("statistics", Keyword::Statistics),
    ("nostatistics", Keyword::NoStatistics),
    ("format", Keyword::Format),
    ("field", Keyword::Field),
    ("key", Keyword::Key),
    ("in_file", Keyword::InFile),
    ("out_file", Keyword::OutFile),
    ("temp_file", Keyword::TempFile),
    ("temp", Keyword::TempFile),
    ("tempdir", Keyword::TempFile),
    ("temp_dir", Keyword::TempFile),
];

const METHODS: &[(&str, Method)] = &[("radix", Method::Radix), ("merge", Method::Merge)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FormatWord {
    RecordSize,
}

const FORMAT_WORDS: &[(&str, FormatWord)] = &[
    ("size", FormatWord::RecordSize),
    ("record_size", FormatWord::RecordSize),
];

/// Words of `-field` and `-key` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LayoutWord {
    Name,
    Offset,
    Size,
    Type(FieldType),
    Endian(Endian),
    Descending(bool),
}

impl LayoutWord {
    fn takes_value(self) -> bool {
        matches!(
            self,
            LayoutWord::Name | LayoutWord::Offset | LayoutWord::Size
        )
    }
}

const LAYOUT_WORDS: &[(&str, LayoutWord)] = &[
    ("name", LayoutWord::Name),
    ("offset", LayoutWord::Offset),
    ("off", LayoutWord::Offset),
    ("position", LayoutWord::Offset),
    ("size", LayoutWord::Size),
    ("character", LayoutWord::Type(FieldType::Character)),
    ("integer", LayoutWord::Type(FieldType::Integer)),
    ("int", LayoutWord::Type(FieldType::Integer)),
    ("unsigned", LayoutWord::Type(FieldType::Unsigned)),
    ("float", LayoutWord::Type(FieldType::Float)),
    ("double", LayoutWord::Type(FieldType::Double)),
    ("decimal", LayoutWord::Type(FieldType::Decimal)),
    ("big_endian", LayoutWord::Endian(Endian::Big)),
    ("little_endian", LayoutWord::Endian(Endian::Little)),
    ("ascending", LayoutWord::Descending(false)),
    ("descending", LayoutWord::Descending(true)),
];

/// Words of file statement options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileWord {
    Direct(bool),
    TransferSize,
    Count,
    Preallocate,
    Sync,
}

impl FileWord {
    fn takes_value(self) -> bool {
        matches!(self, FileWord::TransferSize | FileWord::Count)
    }
}

const FILE_WORDS: &[(&str, FileWord)] = &[
    ("direct", FileWord::Direct(true)),
    ("buffered", FileWord::Direct(false)),
    ("nodirect", FileWord::Direct(false)),
    ("transfer_size", FileWord::TransferSize),
    ("count", FileWord::Count),
    ("preallocate", FileWord::Preallocate),
    ("sync", FileWord::Sync),
];

// ---------------------------------------------------------------------
// Statements and their items

/// One statement split into keyword and value, with its text for messages.
struct Statement<'a> {
    text: &'a str,
    keyword: Keyword,
    value: Option<&'a str>,
}

/// One comma-separated item of a value: `word` or `word=text`/`word:text`.
struct Item<'a> {
    word: &'a str,
    value: Option<&'a str>,
}

/// Splits at the first '=' or ':', Nsort's two separators.
fn split_sep(s: &str) -> (&str, Option<&str>) {
    match s.find(['=', ':']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    }
}

impl<'a> Statement<'a> {
    /// Splits `-KEYWORD[=VALUE]` and resolves the keyword.
    fn split(text: &'a str) -> Result<Self> {
        let body = match text.strip_prefix('-') {
            Some(b) if !b.starts_with('-') => b,
            _ => {
                return Err(SpecError::NotAStatement {
                    token: text.to_string(),
                })
            }
        };
        let (word, value) = split_sep(body);
        let keyword = match lookup(KEYWORDS, word) {
            Match::One(k) => k,
            Match::Unknown => {
                return Err(SpecError::UnknownStatement {
                    statement: text.to_string(),
                    expected: canonical_names(KEYWORDS, "-").join(", "),
                })
            }
            Match::Ambiguous(c) => {
                let names: Vec<String> = c.iter().map(|s| format!("-{s}")).collect();
                return Err(SpecError::AmbiguousStatement {
                    statement: text.to_string(),
                    keyword: word.to_string(),
                    candidates: or_list(&names),
                });
            }
        };
        Ok(Statement {
            text,
            keyword,
            value,
        })
    }

    fn invalid(&self, reason: impl Into<String>) -> SpecError {
        SpecError::Invalid {
            statement: self.text.to_string(),
            reason: reason.into(),
        }
    }

    /// The canonical keyword, for messages ("-memory").
    fn name(&self) -> String {
        format!("-{}", canonical(KEYWORDS, self.keyword))
    }

    /// The value, which must be present and non-empty; `example` shows
    /// the user what one looks like.
    fn value(&self, example: &str) -> Result<&'a str> {
        match self.value {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(self.invalid(format!("{} needs a value, as in {example}", self.name()))),
        }
    }

    fn no_value(&self) -> Result<()> {
        match self.value {
            None => Ok(()),
            Some(_) => Err(self.invalid(format!("{} takes no value", self.name()))),
        }
    }

    /// Splits a value into items; empty items are errors because they
    /// are almost always a typo (`a,,b` or a trailing comma).
    fn items(&self, value: &'a str) -> Result<Vec<Item<'a>>> {
        value.split(',').map(|piece| self.item(piece)).collect()
    }

    fn item(&self, piece: &'a str) -> Result<Item<'a>> {
        if piece.is_empty() {
            return Err(self.invalid("empty option (two commas in a row, or a comma at an end)"));
        }
        let (word, value) = split_sep(piece);
        if value == Some("") {
            return Err(self.invalid(format!(
                "'{word}' needs a value after '{}'",
                &piece[word.len()..]
            )));
        }
        Ok(Item { word, value })
    }

    /// Resolves an item's word in `table`, checking that it has a value
    /// exactly when the word takes one.
    fn word<T: Copy + PartialEq>(
        &self,
        table: &[(&'static str, T)],
        what: &str,
        item: &Item<'_>,
        takes_value: impl Fn(T) -> bool,
    ) -> Result<T> {
        let w = self.lookup_word(table, what, item.word)?;
        let canon = canonical(table, w);
        match (takes_value(w), item.value) {
            (true, None) => Err(self.invalid(format!("'{canon}' needs a value, as in {canon}:N"))),
            (false, Some(_)) => Err(self.invalid(format!("'{canon}' takes no value"))),
            _ => Ok(w),
        }
    }

    fn lookup_word<T: Copy + PartialEq>(
        &self,
        table: &[(&'static str, T)],
        what: &str,
        word: &str,
    ) -> Result<T> {
        match lookup(table, word) {
            Match::One(w) => Ok(w),
            Match::Unknown => Err(SpecError::UnknownWord {
                statement: self.text.to_string(),
                what: what.to_string(),
                word: word.to_string(),
                expected: canonical_names(table, "").join(", "),
            }),
            Match::Ambiguous(c) => Err(SpecError::AmbiguousWord {
                statement: self.text.to_string(),
                what: what.to_string(),
                word: word.to_string(),
                candidates: or_list(&c),
            }),
        }
    }

    /// A whole number of at least 1 (leading '+' and signs rejected).
    fn positive(&self, what: &str, text: &str) -> Result<usize> {
        let n = self.number(what, text)?;
        if n == 0 {
            return Err(self.invalid(format!("{what} must be at least 1")));
        }
        Ok(n)
    }

    fn number(&self, what: &str, text: &str) -> Result<usize> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(self.invalid(format!("{what} must be a whole number, not '{text}'")));
        }
        text.parse()
            .map_err(|_| self.invalid(format!("{what} '{text}' is too large")))
    }

    fn size_error(&self, error: SizeError) -> SpecError {
        SpecError::Size {
            statement: self.text.to_string(),
            error,
        }
    }
}

/// Stores `v` in `slot` unless it already holds a different value: a
/// repeated option is harmless, a contradictory one is a mistake.
fn set_once<T: PartialEq>(
    stmt: &Statement<'_>,
    slot: &mut Option<T>,
    v: T,
    label: &str,
) -> Result<()> {
    match slot {
        Some(old) if *old != v => {
            Err(stmt.invalid(format!("{label} is given twice, with different values")))
        }
        _ => {
            *slot = Some(v);
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------
// Building the spec

/// A `-key` as parsed; a named one is resolved once all fields are known.
enum PendingKey {
    Named {
        statement: String,
        name: String,
        descending: bool,
    },
    Positional {
        statement: String,
        key: KeyDef,
    },
}

impl PendingKey {
    fn statement(&self) -> &str {
        match self {
            PendingKey::Named { statement, .. } | PendingKey::Positional { statement, .. } => {
                statement
            }
        }
    }
}

/// What a `-field` or `-key` statement said, before defaults.
#[derive(Default)]
struct Layout {
    name: Option<String>,
    offset: Option<usize>,
    size: Option<usize>,
    field_type: Option<FieldType>,
    endian: Option<Endian>,
    descending: Option<bool>,
}

#[derive(Default)]
struct Builder {
    spec: NsortSpec,
    /// The statement text of each entry of `spec.fields`, for messages.
    field_statements: Vec<String>,
    keys: Vec<PendingKey>,
    out_statement: Option<String>,
}

impl Builder {
    fn apply(&mut self, st: &Statement<'_>) -> Result<()> {
        match st.keyword {
            Keyword::Processes => {
                self.spec.processes = Some(st.positive("processes", st.value("-processes=16")?)?)
            }
            Keyword::Memory => {
                let v = st.value("-memory=4G")?;
                self.spec.memory =
                    Some(size::parse_nsort_memory_size(v).map_err(|e| st.size_error(e))?);
            }
            Keyword::Method => {
                self.spec.method =
                    Some(st.lookup_word(METHODS, "method", st.value("-method=radix")?)?)
            }
            Keyword::Touch | Keyword::NoTouch => {
                st.no_value()?;
                self.spec.touch = Some(st.keyword == Keyword::Touch);
            }
            Keyword::Statistics | Keyword::NoStatistics => {
                st.no_value()?;
                self.spec.statistics = Some(st.keyword == Keyword::Statistics);
            }
            Keyword::Format => self.spec.record_size = Some(parse_format(st)?),
            Keyword::Field => self.add_field(st)?,
            Keyword::Key => self.keys.push(parse_key(st)?),
            Keyword::InFile => self.spec.in_files.push(parse_file(st, false)?),
            Keyword::OutFile => self.set_out_file(st)?,
            Keyword::TempFile => self.spec.temp_dirs.push(parse_file(st, true)?),
        }
        Ok(())
    }

    fn add_field(&mut self, st: &Statement<'_>) -> Result<()> {
        let layout = parse_layout(
            st,
            st.value("-field=name:key,size:10,offset:0")?,
            FIELD_CONTEXT,
        )?;
        let Some(name) = layout.name.clone() else {
            return Err(st.invalid("-field needs a name, as in name:key"));
        };
        if self.spec.fields.iter().any(|f| f.name == name) {
            return Err(st.invalid(format!("a field named '{name}' is already defined")));
        }
        // Contiguous fields may omit offsets, as in Nsort.
        let next = self
            .spec
            .fields
            .last()
            .map_or(Some(0), |f| f.offset.checked_add(f.size));
        let offset = match layout.offset.or(next) {
            Some(o) => o,
            None => {
                return Err(st.invalid("the previous field ends past the largest possible offset"))
            }
        };
        let (field_type, size, endian) = typed_extent(st, &layout)?;
        self.spec.fields.push(FieldDef {
            name,
            offset,
            size,
            field_type,
            endian,
        });
        self.field_statements.push(st.text.to_string());
        Ok(())
    }

    fn set_out_file(&mut self, st: &Statement<'_>) -> Result<()> {
        if let Some(prev) = &self.out_statement {
            return Err(st.invalid(format!(
                "only one -out_file is allowed, and '{prev}' came first"
            )));
        }
        self.spec.out_file = Some(parse_file(st, true)?);
        self.out_statement = Some(st.text.to_string());
        Ok(())
    }

    /// Resolves keys and checks extents now that every statement is known.
    fn finish(mut self) -> Result<NsortSpec> {
        for (field, text) in self.spec.fields.iter().zip(&self.field_statements) {
            check_extent(
                text,
                field.offset,
                field.size,
                self.spec.record_size,
                "field",
            )?;
        }
        for pending in std::mem::take(&mut self.keys) {
            let key = self.resolve_key(&pending)?;
            check_extent(
                pending.statement(),
                key.offset,
                key.size,
                self.spec.record_size,
                "key",
            )?;
            self.spec.keys.push(key);
        }
        Ok(self.spec)
    }

    fn resolve_key(&self, pending: &PendingKey) -> Result<KeyDef> {
        let (statement, name, descending) = match pending {
            PendingKey::Positional { key, .. } => return Ok(key.clone()),
            PendingKey::Named {
                statement,
                name,
                descending,
            } => (statement, name, *descending),
        };
        let Some(f) = self.spec.fields.iter().find(|f| &f.name == name) else {
            let reason = unknown_field(name, &self.spec.fields);
            return Err(SpecError::Invalid {
                statement: statement.clone(),
                reason,
            });
        };
        Ok(KeyDef {
            field: Some(f.name.clone()),
            offset: f.offset,
            size: f.size,
            field_type: f.field_type,
            endian: f.endian,
            descending,
        })
    }
}

fn unknown_field(name: &str, fields: &[FieldDef]) -> String {
    if fields.is_empty() {
        return format!(
            "no -field is named '{name}' (no fields are defined; field names are case-sensitive)"
        );
    }
    let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
    format!(
        "no -field is named '{name}'; the fields are {} (names are case-sensitive)",
        names.join(", ")
    )
}

/// Checks that bytes `offset..offset+size` lie inside the record.
fn check_extent(
    statement: &str,
    offset: usize,
    size: usize,
    record: Option<usize>,
    what: &str,
) -> Result<()> {
    let err = |reason: String| SpecError::Invalid {
        statement: statement.to_string(),
        reason,
    };
    let Some(end) = offset.checked_add(size) else {
        return Err(err(format!(
            "the {what} ends past the largest possible record"
        )));
    };
    match record {
        Some(r) if end > r => Err(err(format!(
            "the {what} covers bytes {offset}..{end}, \
             past the end of the {r}-byte record (-format=size:{r})"
        ))),
        _ => Ok(()),
    }
}

fn parse_format(st: &Statement<'_>) -> Result<usize> {
    let mut size = None;
    for item in st.items(st.value("-format=size:100")?)? {
        match st.word(FORMAT_WORDS, "format option", &item, |_| true)? {
            FormatWord::RecordSize => {
                let n = st.positive("the record size", item.value.unwrap_or_default())?;
                set_once(st, &mut size, n, "the record size")?;
            }
        }
    }
    size.ok_or_else(|| st.invalid("-format needs the record size, as in -format=size:100"))
}

/// Which layout words a statement accepts.
#[derive(Clone, Copy)]
struct LayoutContext {
    what: &'static str,
    allows: fn(LayoutWord) -> bool,
}

const FIELD_CONTEXT: LayoutContext = LayoutContext {
    what: "field option",
    allows: |w| !matches!(w, LayoutWord::Descending(_)),
};
/// After `-key=NAME,` only a direction can follow, so `d` means descending.
const NAMED_KEY_CONTEXT: LayoutContext = LayoutContext {
    what: "key option",
    allows: |w| matches!(w, LayoutWord::Descending(_)),
};
const KEY_CONTEXT: LayoutContext = LayoutContext {
    what: "key option",
    allows: |_| true,
};

/// Parses the items of a `-field` or `-key` value into a [`Layout`].
fn parse_layout(st: &Statement<'_>, value: &str, ctx: LayoutContext) -> Result<Layout> {
    let table: Vec<(&'static str, LayoutWord)> = LAYOUT_WORDS
        .iter()
        .copied()
        .filter(|&(_, w)| (ctx.allows)(w))
        .collect();
    let mut l = Layout::default();
    for item in st.items(value)? {
        let word = st.word(&table, ctx.what, &item, LayoutWord::takes_value)?;
        apply_layout_word(st, &mut l, word, item.value.unwrap_or_default())?;
    }
    Ok(l)
}

fn apply_layout_word(
    st: &Statement<'_>,
    l: &mut Layout,
    word: LayoutWord,
    text: &str,
) -> Result<()> {
    match word {
        LayoutWord::Name => set_once(st, &mut l.name, text.to_string(), "the name"),
        LayoutWord::Offset => set_once(
            st,
            &mut l.offset,
            st.number("the offset", text)?,
            "the offset",
        ),
        LayoutWord::Size => set_once(st, &mut l.size, st.positive("the size", text)?, "the size"),
        LayoutWord::Type(t) => set_once(st, &mut l.field_type, t, "the type"),
        LayoutWord::Endian(e) => set_once(st, &mut l.endian, e, "the byte order"),
        LayoutWord::Descending(d) => set_once(st, &mut l.descending, d, "the direction"),
    }
}

/// Parses a `-key` value: `NAME[,ascending|descending]` or options.
fn parse_key(st: &Statement<'_>) -> Result<PendingKey> {
    let value = st.value("-key=key or -key=position:0,size:10")?;
    let (first, rest) = match value.split_once(',') {
        Some((f, r)) => (f, Some(r)),
        None => (value, None),
    };
    // A bare first word names a field unless options with values follow,
    // so that `-key=descending,position:0,size:4` stays positional.
    let named = !first.contains(['=', ':']) && !rest.unwrap_or_default().contains(['=', ':']);
    let mut l = match rest {
        Some(r) if named => parse_layout(st, r, NAMED_KEY_CONTEXT)?,
        _ if named => Layout::default(),
        _ => parse_layout(st, value, KEY_CONTEXT)?,
    };
    if named {
        set_once(st, &mut l.name, first.to_string(), "the name")?;
    }
    let statement = st.text.to_string();
    let descending = l.descending.unwrap_or(false);
    match l.name.take() {
        Some(name) => {
            check_named_key(st, &l)?;
            Ok(PendingKey::Named {
                statement,
                name,
                descending,
            })
        }
        None => Ok(PendingKey::Positional {
            statement,
            key: positional_key(st, &l, descending)?,
        }),
    }
}

/// A key naming a field takes its layout from the field and nothing else.
fn check_named_key(st: &Statement<'_>, l: &Layout) -> Result<()> {
    if l.offset.is_some() || l.size.is_some() || l.field_type.is_some() || l.endian.is_some() {
        return Err(st.invalid(
            "a key that names a field takes its position, size and type from the field; \
             give either a field name or position and size",
        ));
    }
    Ok(())
}

fn positional_key(st: &Statement<'_>, l: &Layout, descending: bool) -> Result<KeyDef> {
    let Some(offset) = l.offset else {
        return Err(
            st.invalid("-key needs a field name or a position, as in -key=position:0,size:10")
        );
    };
    let (field_type, size, endian) = typed_extent(st, l)?;
    Ok(KeyDef {
        field: None,
        offset,
        size,
        field_type,
        endian,
        descending,
    })
}

/// Applies type defaults to a layout and checks size and byte order
/// against the type: returns (type, size, endian).
fn typed_extent(st: &Statement<'_>, l: &Layout) -> Result<(FieldType, usize, Option<Endian>)> {
    let t = l.field_type.unwrap_or(FieldType::Character);
    if l.endian.is_some() && !t.is_binary_number() {
        return Err(st.invalid(format!(
            "a byte order applies only to binary numbers \
             (integer, unsigned, float, double), not {t}"
        )));
    }
    let size = type_size(t, l.size).map_err(|reason| st.invalid(reason))?;
    Ok((t, size, l.endian))
}

/// The size of a value of type `t`: the given one if the type allows it,
/// else the type's default; character and decimal have no default.
fn type_size(t: FieldType, given: Option<usize>) -> Result<usize, String> {
    let (default, allowed): (Option<usize>, &[usize]) = match t {
        FieldType::Character | FieldType::Decimal => (None, &[]),
        FieldType::Integer | FieldType::Unsigned => (Some(4), &[1, 2, 4, 8]),
        FieldType::Float => (Some(4), &[4]),
        FieldType::Double => (Some(8), &[8]),
    };
    match (given, default) {
        (None, Some(d)) => Ok(d),
        (None, None) => Err(format!("a {t} field or key needs a size, as in size:10")),
        (Some(n), _) if allowed.is_empty() || allowed.contains(&n) => Ok(n),
        (Some(n), _) => {
            let list: Vec<String> = allowed.iter().map(usize::to_string).collect();
            Err(format!("{t} values are {} bytes, not {n}", or_list(&list)))
        }
    }
}

/// Parses `PATH[,OPTS]`; `writable` is false for `-in_file`, where
/// `preallocate` and `sync` mean nothing.
fn parse_file(st: &Statement<'_>, writable: bool) -> Result<FileSpec> {
    let value = st.value(&format!("{}=/path", st.name()))?;
    let (path, opts) = match value.split_once(',') {
        Some((p, o)) => (p, Some(o)),
        None => (value, None),
    };
    if path.is_empty() {
        return Err(st.invalid(format!("{} needs a path before the options", st.name())));
    }
    let mut f = FileSpec {
        path: PathBuf::from(path),
        direct: None,
        transfer_size: None,
        count: None,
        preallocate: false,
        sync: false,
    };
    let items = match opts {
        Some(o) => st.items(o)?,
        None => Vec::new(),
    };
    for item in &items {
        let word = st.word(FILE_WORDS, "file option", item, FileWord::takes_value)?;
        apply_file_word(st, &mut f, word, item.value.unwrap_or_default(), writable)?;
    }
    Ok(f)
}

fn apply_file_word(
    st: &Statement<'_>,
    f: &mut FileSpec,
    word: FileWord,
    text: &str,
    writable: bool,
) -> Result<()> {
    match word {
        FileWord::Direct(d) => set_once(st, &mut f.direct, d, "direct or buffered")?,
        FileWord::TransferSize => set_once(
            st,
            &mut f.transfer_size,
            transfer_size(st, text)?,
            "transfer_size",
        )?,
        FileWord::Count => set_once(st, &mut f.count, st.positive("count", text)?, "count")?,
        FileWord::Preallocate | FileWord::Sync if !writable => {
            let w = canonical(FILE_WORDS, word);
            return Err(st.invalid(format!("'{w}' applies only to -out_file and -temp_file")));
        }
        FileWord::Preallocate => f.preallocate = true,
        FileWord::Sync => f.sync = true,
    }
    Ok(())
}

/// Direct I/O needs transfers aligned to the device's blocks; 4 KiB
/// covers every common device, so require multiples of it.
fn transfer_size(st: &Statement<'_>, text: &str) -> Result<u64> {
    let n = size::parse_byte_count(text).map_err(|e| st.size_error(e))?;
    if n < 4096 || n % 4096 != 0 {
        return Err(st.invalid(format!(
            "transfer_size must be at least 4 KiB and a multiple of 4 KiB (4096 bytes) \
             to keep direct I/O aligned, not {text} ({})",
            size::format_bytes(n)
        )));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> NsortSpec {
        match parse_spec(text) {
            Ok(s) => s,
            Err(e) => panic!("{text:?} failed: {e}"),
        }
    }

    fn err(text: &str) -> String {
        match parse_spec(text) {
            Ok(s) => panic!("{text:?} should fail, gave {s:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn file(path: &str) -> FileSpec {
        FileSpec {
            path: PathBuf::from(path),
            direct: None,
            transfer_size: None,
            count: None,
            preallocate: false,
            sync: false,
        }
    }

    const PUBLISHED: &str = "
        -processes=16 -memory=124000M -method=radix -touch -format=size:100
        -field=name:key,size:10,off:0,character -key=key -statistics
        -in_file=/data/in,direct,transfer_size=16M,count=64
        -out_file=/data/out,direct,transfer_size=64M,count=64,preallocate
        -temp=/scratch/tmp,direct,transfer_size=64M,count=32,preallocate
    ";

    #[test]
    fn published_command_line() {
        let io = |path: &str, mib: u64, count: usize, preallocate: bool| FileSpec {
            direct: Some(true),
            transfer_size: Some(mib << 20),
            count: Some(count),
            preallocate,
            ..file(path)
        };
        let want = NsortSpec {
            processes: Some(16),
            memory: Some(MemorySize::Bytes(124000 << 20)),
            method: Some(Method::Radix),
            touch: Some(true),
            statistics: Some(true),
            record_size: Some(100),
            fields: vec![FieldDef {
                name: "key".into(),
                offset: 0,
                size: 10,
                field_type: FieldType::Character,
                endian: None,
            }],
            keys: vec![KeyDef {
                field: Some("key".into()),
                offset: 0,
                size: 10,
                field_type: FieldType::Character,
                endian: None,
                descending: false,
            }],
            in_files: vec![io("/data/in", 16, 64, false)],
            out_file: Some(io("/data/out", 64, 64, true)),
            temp_dirs: vec![io("/scratch/tmp", 64, 32, true)],
        };
        assert_eq!(ok(PUBLISHED), want);
    }

    #[test]
    fn empty_spec_is_default() {
        assert_eq!(ok(""), NsortSpec::default());
        assert_eq!(ok("  \n # only a comment\n\t"), NsortSpec::default());
    }

    #[test]
    fn colon_or_equals_after_keyword() {
        assert_eq!(ok("-memory:1G").memory, Some(MemorySize::Bytes(1 << 30)));
        assert_eq!(ok("-memory=1G").memory, Some(MemorySize::Bytes(1 << 30)));
        assert_eq!(ok("-processes:4").processes, Some(4));
        assert_eq!(ok("-format=record_size=100").record_size, Some(100));
        let s = ok("-in_file:/a,transfer_size:1M,count=2");
        assert_eq!(s.in_files[0].transfer_size, Some(1 << 20));
        assert_eq!(s.in_files[0].count, Some(2));
    }

    #[test]
    fn keyword_prefixes_aliases_and_case() {
        let s = ok("-mem=2G -stat -proc=3 -meth=merge -tou -form=siz:8 -in=/a -ou=/b -te=/t");
        assert_eq!(s.memory, Some(MemorySize::Bytes(2 << 30)));
        assert_eq!(s.statistics, Some(true));
        assert_eq!(s.processes, Some(3));
        assert_eq!(s.method, Some(Method::Merge));
        assert_eq!(s.touch, Some(true));
        assert_eq!(s.record_size, Some(8));
        assert_eq!(s.in_files, vec![file("/a")]);
        assert_eq!(s.out_file, Some(file("/b")));
        assert_eq!(s.temp_dirs, vec![file("/t")]);
        let s = ok(
            "-MEMORY=1G -Statistics -NoTouch -NOSTAT -Method=RADIX -K=Key -Field=name:Key,SIZE:2",
        );
        assert_eq!(s.memory, Some(MemorySize::Bytes(1 << 30)));
        assert_eq!(s.statistics, Some(false));
        assert_eq!(s.touch, Some(false));
        assert_eq!(s.method, Some(Method::Radix));
        assert_eq!(s.keys[0].field.as_deref(), Some("Key"));
        for kw in [
            "temp",
            "temp_file",
            "tempdir",
            "temp_dir",
            "temp_f",
            "TEMP_DIR",
        ] {
            assert_eq!(ok(&format!("-{kw}=/x")).temp_dirs, vec![file("/x")], "{kw}");
        }
        assert!(err("-m=r").starts_with("ambiguous statement '-m=r'"));
        assert_eq!(ok("-meth=r").method, Some(Method::Radix));
    }

    #[test]
    fn later_statements_override() {
        let s = ok("-touch -notouch -nostat -stat -processes=2 -processes=8 \
            -memory=50% -format=size:4 -format=size:9");
        assert_eq!(s.touch, Some(false));
        assert_eq!(s.statistics, Some(true));
        assert_eq!(s.processes, Some(8));
        assert_eq!(s.memory, Some(MemorySize::PercentOfRam(50.0)));
        assert_eq!(s.record_size, Some(9));
    }

    #[test]
    fn bare_memory_number_is_mib() {
        assert_eq!(
            ok("-memory=4000").memory,
            Some(MemorySize::Bytes(4000 << 20))
        );
        assert_eq!(ok("-memory=1.5G").memory, Some(MemorySize::Bytes(3 << 29)));
    }

    #[test]
    fn comments_and_newlines() {
        let s = ok("# a spec\n-processes=2   # threads\n\n-memory=1G\n#-touch\n");
        assert_eq!(s.processes, Some(2));
        assert_eq!(s.memory, Some(MemorySize::Bytes(1 << 30)));
        assert_eq!(s.touch, None);
        // '#' inside a word is not a comment, so the size is bad.
        let s = ok("-in_file=/data/run#1 # the input\r\n-stat");
        assert_eq!(s.in_files, vec![file("/data/run#1")]);
        assert_eq!(s.statistics, Some(true));
        assert!(err("-memory=1G#x").contains("unknown unit 'G#x'"));
    }

    #[test]
    fn several_temp_and_in_files() {
        let s = ok("-temp=/t1,count=2 -temp_dir=/t2 -tempdir=/t3,buffered -in_file=/a -in_file=/b");
        let paths: Vec<_> = s
            .temp_dirs
            .iter()
            .map(|f| f.path.to_str().unwrap_or(""))
            .collect();
        assert_eq!(paths, ["/t1", "/t2", "/t3"]);
        assert_eq!(s.temp_dirs[0].count, Some(2));
        assert_eq!(s.temp_dirs[2].direct, Some(false));
        assert_eq!(s.in_files, vec![file("/a"), file("/b")]);
    }

    #[test]
    fn file_option_words_and_prefixes() {
        let s = ok("-out_file=/o,dir,trans=8K,cou=3,prealloc,sy");
        let want = FileSpec {
            direct: Some(true),
            transfer_size: Some(8192),
            count: Some(3),
            preallocate: true,
            sync: true,
            ..file("/o")
        };
        assert_eq!(s.out_file, Some(want));
        assert_eq!(ok("-temp=/t,nodirect").temp_dirs[0].direct, Some(false));
        assert_eq!(ok("-temp=/t,BUFFERED,buf").temp_dirs[0].direct, Some(false));
        assert_eq!(
            ok("-temp=/t,transfer_size=4096").temp_dirs[0].transfer_size,
            Some(4096)
        );
        // Paths keep '=' and ':' and their case.
        assert_eq!(ok("-in_file=/a=b:C").in_files, vec![file("/a=b:C")]);
    }

    #[test]
    fn field_option_words_and_defaults() {
        let s = ok("-format=size:32 \
            -field=name:a,siz:4,offset:2 -field=name:b,size:3,pos:6,char \
            -field=name:c,int,big -field=name:d,unsigned,size:2,little_endian \
            -field=name:e,float -field=name:f,double,off:24 -field=name:g,dec,size:1,o:31");
        let f = |name: &str, offset, size, field_type, endian| FieldDef {
            name: name.into(),
            offset,
            size,
            field_type,
            endian,
        };
        use FieldType::*;
        assert_eq!(
            s.fields,
            vec![
                f("a", 2, 4, Character, None),
                f("b", 6, 3, Character, None),
                f("c", 9, 4, Integer, Some(Endian::Big)),
                f("d", 13, 2, Unsigned, Some(Endian::Little)),
                f("e", 15, 4, Float, None),
                f("f", 24, 8, Double, None),
                f("g", 31, 1, Decimal, None),
            ]
        );
        for (size, ok_) in [
            (1, true),
            (2, true),
            (3, false),
            (4, true),
            (8, true),
            (16, false),
        ] {
            assert_eq!(
                parse_spec(&format!("-field=name:x,integer,size:{size}")).is_ok(),
                ok_,
                "{size}"
            );
        }
        // A repeated option with the same value is harmless.
        assert_eq!(ok("-field=name:x,size:2,size:2").fields[0].size, 2);
    }

    #[test]
    fn keys_in_priority_order() {
        let s = ok("-key=b,descending -key=position:0,size:2 -key=a,asc \
            -key=pos:4,int,size:8,little,desc -key=a,d \
            -field=name:a,size:2,off:10 -field=name:b,double,big_endian,off:12");
        let k = |field: Option<&str>, offset, size, field_type, endian, descending| KeyDef {
            field: field.map(String::from),
            offset,
            size,
            field_type,
            endian,
            descending,
        };
        use FieldType::*;
        assert_eq!(
            s.keys,
            vec![
                k(Some("b"), 12, 8, Double, Some(Endian::Big), true),
                k(None, 0, 2, Character, None, false),
                k(Some("a"), 10, 2, Character, None, false),
                k(None, 4, 8, Integer, Some(Endian::Little), true),
                k(Some("a"), 10, 2, Character, None, true),
            ]
        );
        assert!(ok("-field=name:a,size:1 -key=name:a,DESC").keys[0].descending);
        // A bare first word followed by options with values is an option.
        let s = ok("-key=descending,position:3,size:1");
        assert_eq!(s.keys, vec![k(None, 3, 1, Character, None, true)]);
        assert_eq!(
            ok("-key=offset=5,unsigned").keys,
            vec![k(None, 5, 4, Unsigned, None, false)]
        );
    }

    #[test]
    fn extents_fit_the_record_whatever_the_order() {
        assert!(parse_spec("-field=name:k,size:10,off:90 -key=k -format=size:100").is_ok());
        assert!(parse_spec("-key=position:99,size:1 -format=size:100").is_ok());
    }

    /// Each error quotes the statement; the full text is checked.
    #[test]
    fn statement_errors() {
        let cases: &[(&str, &str)] = &[
            (
                "memory=1G",
                "'memory=1G' is not an Nsort statement: statements start with a single '-', \
                 as in -memory=1G",
            ),
            (
                "--memory=1G",
                "'--memory=1G' is not an Nsort statement: statements start with a single '-', \
                 as in -memory=1G",
            ),
            (
                "-colour=red",
                "unknown statement '-colour=red': expected one of -processes, -memory, -method, \
                 -touch, -notouch, -statistics, -nostatistics, -format, -field, -key, -in_file, \
                 -out_file, -temp_file",
            ),
            (
                "-me=1G",
                "ambiguous statement '-me=1G': '-me' could be -memory or -method",
            ),
            (
                "-t",
                "ambiguous statement '-t': '-t' could be -touch or -temp_file",
            ),
            (
                "-no",
                "ambiguous statement '-no': '-no' could be -notouch or -nostatistics",
            ),
            (
                "-f=x",
                "ambiguous statement '-f=x': '-f' could be -format or -field",
            ),
            (
                "-processes=0",
                "invalid statement '-processes=0': processes must be at least 1",
            ),
            (
                "-proc=many",
                "invalid statement '-proc=many': processes must be a whole number, not 'many'",
            ),
            (
                "-processes",
                "invalid statement '-processes': -processes needs a value, as in -processes=16",
            ),
            (
                "-memory=",
                "invalid statement '-memory=': -memory needs a value, as in -memory=4G",
            ),
            (
                "-memory=lots",
                "invalid statement '-memory=lots': invalid size 'lots': expected a number with an \
                 optional unit (b, K, M, G, T, P, E), as in 512M or 1.5G",
            ),
            (
                "-memory=0",
                "invalid statement '-memory=0': invalid size '0': must be at least one byte",
            ),
            (
                "-memory=150%",
                "invalid statement '-memory=150%': invalid size '150%': a percentage of RAM \
                 must be more than 0 and at most 100",
            ),
            (
                "-touch=yes",
                "invalid statement '-touch=yes': -touch takes no value",
            ),
            (
                "-nostat:1",
                "invalid statement '-nostat:1': -nostatistics takes no value",
            ),
            (
                "-method=quick",
                "invalid statement '-method=quick': unknown method 'quick'; expected one of \
                 radix, merge",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(err(text), *want, "for {text:?}");
        }
    }

    #[test]
    fn format_errors() {
        let cases: &[(&str, &str)] = &[
            (
                "-format=size:0",
                "invalid statement '-format=size:0': the record size must be at least 1",
            ),
            (
                "-format=size",
                "invalid statement '-format=size': 'size' needs a value, as in size:N",
            ),
            (
                "-format=size:",
                "invalid statement '-format=size:': 'size' needs a value after ':'",
            ),
            (
                "-format=lines",
                "invalid statement '-format=lines': unknown format option 'lines'; expected one \
                 of size",
            ),
            (
                "-format=size:10,record_size:12",
                "invalid statement '-format=size:10,record_size:12': the record size is given \
                 twice, with different values",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(err(text), *want, "for {text:?}");
        }
    }

    #[test]
    fn field_errors() {
        let cases: &[(&str, &str)] = &[
            (
                "-field=size:4",
                "invalid statement '-field=size:4': -field needs a name, as in name:key",
            ),
            (
                "-field=name:a,size:1 -field=name:a,size:2",
                "invalid statement '-field=name:a,size:2': a field named 'a' is already defined",
            ),
            (
                "-format=size:100 -field=name:k,size:10,off:95",
                "invalid statement '-field=name:k,size:10,off:95': the field covers bytes 95..105, \
                 past the end of the 100-byte record (-format=size:100)",
            ),
            (
                "-field=name:k,off:0",
                "invalid statement '-field=name:k,off:0': a character field or key needs a size, \
                 as in size:10",
            ),
            (
                "-field=name:k,integer,size:3",
                "invalid statement '-field=name:k,integer,size:3': integer values are 1, 2, 4 \
                 or 8 bytes, not 3",
            ),
            (
                "-field=name:k,float,size:8",
                "invalid statement '-field=name:k,float,size:8': float values are 4 bytes, \
                 not 8",
            ),
            (
                "-field=name:k,size:4,big_endian",
                "invalid statement '-field=name:k,size:4,big_endian': a byte order applies only \
                 to binary numbers (integer, unsigned, float, double), not character",
            ),
            (
                "-field=name:k,size:0",
                "invalid statement '-field=name:k,size:0': the size must be at least 1",
            ),
            (
                "-field=name:k,size:4,off:-1",
                "invalid statement '-field=name:k,size:4,off:-1': the offset must be a whole \
                 number, not '-1'",
            ),
            (
                "-field=name:k,size:4,descending",
                "invalid statement '-field=name:k,size:4,descending': unknown field option \
                 'descending'; expected one of name, offset, size, character, integer, unsigned, \
                 float, double, decimal, big_endian, little_endian",
            ),
            (
                "-field=name:k,d",
                "invalid statement '-field=name:k,d': field option 'd' is ambiguous; it could be \
                 double or decimal",
            ),
            (
                "-field=name:k,size:4,int,char",
                "invalid statement '-field=name:k,size:4,int,char': the type is given twice, \
                 with different values",
            ),
            (
                "-field=name:k,character:1",
                "invalid statement '-field=name:k,character:1': 'character' takes no value",
            ),
            (
                "-field=name:k,,size:1",
                "invalid statement '-field=name:k,,size:1': empty option (two commas in a row, \
                 or a comma at an end)",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(err(text), *want, "for {text:?}");
        }
    }

    #[test]
    fn key_errors() {
        let cases: &[(&str, &str)] = &[
            (
                "-key=nokey",
                "invalid statement '-key=nokey': no -field is named 'nokey' (no fields are \
                 defined; field names are case-sensitive)",
            ),
            (
                "-field=name:a,size:1 -field=name:b,size:1 -key=A",
                "invalid statement '-key=A': no -field is named 'A'; the fields are a, b \
                 (names are case-sensitive)",
            ),
            (
                "-field=name:a,size:1 -key=name:a,size:1",
                "invalid statement '-key=name:a,size:1': a key that names a field takes its \
                 position, size and type from the field; give either a field name or position \
                 and size",
            ),
            (
                "-key=size:4",
                "invalid statement '-key=size:4': -key needs a field name or a position, as in \
                 -key=position:0,size:10",
            ),
            (
                "-key=position:0",
                "invalid statement '-key=position:0': a character field or key needs a size, \
                 as in size:10",
            ),
            (
                "-format=size:100 -key=position:95,size:10",
                "invalid statement '-key=position:95,size:10': the key covers bytes 95..105, \
                 past the end of the 100-byte record (-format=size:100)",
            ),
            (
                "-key=pos:0,size:4,d",
                "invalid statement '-key=pos:0,size:4,d': key option 'd' is ambiguous; it could \
                 be double, decimal or descending",
            ),
            (
                "-field=name:a,size:1 -key=a,int",
                "invalid statement '-key=a,int': unknown key option 'int'; expected one of \
                 ascending, descending",
            ),
            (
                "-key=k,asc,desc",
                "invalid statement '-key=k,asc,desc': the direction is given twice, with \
                 different values",
            ),
            (
                "-key",
                "invalid statement '-key': -key needs a value, as in -key=key or \
                 -key=position:0,size:10",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(err(text), *want, "for {text:?}");
        }
    }

    #[test]
    fn file_errors() {
        let cases: &[(&str, &str)] = &[
            (
                "-in_file=/a,count=0",
                "invalid statement '-in_file=/a,count=0': count must be at least 1",
            ),
            (
                "-in_file=/a,count",
                "invalid statement '-in_file=/a,count': 'count' needs a value, as in count:N",
            ),
            (
                "-temp=/t,transfer_size=1000",
                "invalid statement '-temp=/t,transfer_size=1000': transfer_size must be at least \
                 4 KiB and a multiple of 4 KiB (4096 bytes) to keep direct I/O aligned, not 1000 \
                 (1000 B)",
            ),
            (
                "-temp=/t,transfer_size=6K",
                "invalid statement '-temp=/t,transfer_size=6K': transfer_size must be at least \
                 4 KiB and a multiple of 4 KiB (4096 bytes) to keep direct I/O aligned, not 6K \
                 (6 KiB)",
            ),
            (
                "-temp=/t,transfer_size=50%",
                "invalid statement '-temp=/t,transfer_size=50%': invalid size '50%': a \
                 percentage is not allowed here; give a size such as 16M",
            ),
            (
                "-in_file=/a,fast",
                "invalid statement '-in_file=/a,fast': unknown file option 'fast'; expected one \
                 of direct, buffered, transfer_size, count, preallocate, sync",
            ),
            (
                "-in_file=/a,preallocate",
                "invalid statement '-in_file=/a,preallocate': 'preallocate' applies only to \
                 -out_file and -temp_file",
            ),
            (
                "-in=/a,sync",
                "invalid statement '-in=/a,sync': 'sync' applies only to -out_file and -temp_file",
            ),
            (
                "-out_file=/o,direct,buffered",
                "invalid statement '-out_file=/o,direct,buffered': direct or buffered is given \
                 twice, with different values",
            ),
            (
                "-out_file=,direct",
                "invalid statement '-out_file=,direct': -out_file needs a path before the options",
            ),
            (
                "-temp_dir",
                "invalid statement '-temp_dir': -temp_file needs a value, as in -temp_file=/path",
            ),
            (
                "-in_file=/a,",
                "invalid statement '-in_file=/a,': empty option (two commas in a row, or a comma \
                 at an end)",
            ),
            (
                "-out_file=/o1 -out_file=/o2",
                "invalid statement '-out_file=/o2': only one -out_file is allowed, and \
                 '-out_file=/o1' came first",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(err(text), *want, "for {text:?}");
        }
    }

    #[test]
    fn numbers_too_large() {
        assert_eq!(
            err("-processes=99999999999999999999999"),
            "invalid statement '-processes=99999999999999999999999': processes \
             '99999999999999999999999' is too large"
        );
        assert_eq!(
            err("-field=name:a,size:1,off:18446744073709551615 -field=name:b,size:1"),
            "invalid statement '-field=name:b,size:1': the previous field ends past the \
             largest possible offset"
        );
        assert_eq!(
            err("-key=position:18446744073709551615,size:2"),
            "invalid statement '-key=position:18446744073709551615,size:2': the key ends past \
             the largest possible record"
        );
    }

    #[test]
    fn first_error_wins_and_variants_are_matchable() {
        let e = parse_spec("-stat -bogus -memory=x").expect_err("bogus");
        assert!(
            matches!(e, SpecError::UnknownStatement { ref statement, .. } if statement == "-bogus")
        );
        let e = parse_spec("-memory=x").expect_err("size");
        assert!(matches!(
            e,
            SpecError::Size {
                error: SizeError::NotANumber(_),
                ..
            }
        ));
    }
}
