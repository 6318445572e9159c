//! Nsort's statement language, as given to `xsort --spec 'STATEMENTS'`
//! (and later to the C API, as Nsort's subroutine library took statement
//! strings). [`parse_spec`] turns the text into an [`NsortSpec`]; the CLI
//! maps that onto the sorter's configuration (typed fields become typed
//! key parts, [`crate::key::KeyType`]).
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
//! | `-format=delimiter:C[,maximum_size:N]` (or `record_delimiter:C`) | variable-length records, each ended by the byte C |
//! | `-field=name:NAME,size:N,offset:N[,TYPE][,ENDIAN]` | a named field in the record |
//! | `-field=name:NAME,delimiter:C[,character\|decimal]` | a field of a delimited record, ended by the byte C |
//! | `-key=NAME[,ascending\|descending]` | sort on a field (keys in priority order) |
//! | `-key=position:OFF,size:N[,TYPE][,ENDIAN][,descending]` | sort on bytes not named by a field |
//! | `-in_file=PATH[,OPTS]` | an input file; may repeat |
//! | `-out_file=PATH[,OPTS]` | the output file; at most once |
//! | `-temp_file=DIR[,OPTS]` (also `-temp`, `-tempdir`, `-temp_dir`) | a temporary directory; may repeat |
//!
//! Field and key words: `offset` (also `off`, `position`), `size`, the
//! types `character` (the default), `integer` (`int`), `unsigned`, `float`,
//! `double`, `decimal`, and the byte orders `big_endian`, `little_endian`
//! (binary numbers only; when absent the consumer chooses: xsort, like
//! Nsort, uses the machine's order). Binary numbers have default sizes (integer and
//! unsigned 4, of 1, 2, 4 or 8; float 4; double 8); character and decimal
//! fields need `size`. A field's offset defaults to the end of the
//! previous `-field` (0 for the first), so contiguous fields can omit it.
//! A `-key` whose first item is a bare word and which has no `word:value`
//! item names a field (`-key=key,descending`); otherwise all its items are
//! options, `name:NAME` included.
//!
//! Delimited records (`-format=delimiter:'\n'`) have delimited fields, each
//! starting where the previous one ended and ending at its `delimiter`
//! (or at the end of the record); they take no offset or size and are
//! text: `character` or `decimal`. How a delimiter is written, and which
//! layouts are accepted: [`delimited`]. `maximum_size` is accepted and not
//! enforced (xsort has no record-length limit).
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

pub mod delimited;

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
    /// The byte that ends a field of a delimited record (`delimiter:C`); such a
    /// field has no fixed place, and its `offset` and `size` are 0.
    pub delimiter: Option<u8>,
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
    /// `-format=delimiter:C`: variable-length records, each ended by this byte
    /// (never set together with `record_size`).
    pub record_delimiter: Option<u8>,
    /// `-format=...,maximum_size:N` of delimited records (accepted, not enforced).
    pub maximum_record_size: Option<usize>,
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
    /// `-duplicates` (true) or `-noduplicates` (false: keep one record per key).
    pub duplicates: Option<bool>,
    /// `-summarize=FIELD,...`: integer fields summed over records with equal keys.
    pub summarize: Vec<FieldDef>,
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
    Duplicates,
    NoDuplicates,
    Summarize,
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
    ("duplicates", Keyword::Duplicates),
    ("noduplicates", Keyword::NoDuplicates),
    ("summarize", Keyword::Summarize),
];

const METHODS: &[(&str, Method)] = &[("radix", Method::Radix), ("merge", Method::Merge)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FormatWord {
    RecordSize,
    Delimiter,
    MaximumSize,
}

const FORMAT_WORDS: &[(&str, FormatWord)] = &[
    ("size", FormatWord::RecordSize),
    ("record_size", FormatWord::RecordSize),
    ("delimiter", FormatWord::Delimiter),
    ("record_delimiter", FormatWord::Delimiter),
    ("maximum_size", FormatWord::MaximumSize),
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
    Delimiter,
}

impl LayoutWord {
    fn takes_value(self) -> bool {
        matches!(
            self,
            LayoutWord::Name | LayoutWord::Offset | LayoutWord::Size | LayoutWord::Delimiter
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
    ("delimiter", LayoutWord::Delimiter),
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
        delimited::split_items(value)
            .into_iter()
            .map(|piece| self.item(piece))
            .collect()
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
    delimiter: Option<u8>,
}

#[derive(Default)]
struct Builder {
    spec: NsortSpec,
    /// The statement text of each entry of `spec.fields`, for messages.
    field_statements: Vec<String>,
    keys: Vec<PendingKey>,
    out_statement: Option<String>,
    /// `-summarize` statements and the field names they list, resolved at the end.
    summarize: Vec<(String, Vec<String>)>,
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
            Keyword::Format => {
                let (size, delimiter, maximum) = parse_format(st)?;
                self.spec.record_size = size;
                self.spec.record_delimiter = delimiter;
                self.spec.maximum_record_size = maximum;
            }
            Keyword::Field => self.add_field(st)?,
            Keyword::Key => self.keys.push(parse_key(st)?),
            Keyword::InFile => self.spec.in_files.push(parse_file(st, false)?),
            Keyword::OutFile => self.set_out_file(st)?,
            Keyword::TempFile => self.spec.temp_dirs.push(parse_file(st, true)?),
            Keyword::Duplicates | Keyword::NoDuplicates => {
                st.no_value()?;
                self.spec.duplicates = Some(st.keyword == Keyword::Duplicates);
            }
            Keyword::Summarize => {
                let names = st.value("-summarize=count,total")?;
                self.summarize.push((st.text.to_string(), names.split(',').map(|n| n.trim().to_string()).collect()));
            }
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
        if let Some(delimiter) = layout.delimiter {
            let field_type = delimited::field_type(st, &layout)?;
            self.spec.fields.push(FieldDef {
                name,
                offset: 0,
                size: 0,
                field_type,
                endian: None,
                delimiter: Some(delimiter),
            });
            self.field_statements.push(st.text.to_string());
            return Ok(());
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
            delimiter: None,
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
        let mut key_statements = Vec::new();
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
            key_statements.push(pending.statement().to_string());
        }
        delimited::check(
            &self.spec,
            &self.field_statements,
            &key_statements,
            self.summarize.first().map(|(s, _)| s.as_str()),
        )?;
        for (statement, names) in std::mem::take(&mut self.summarize) {
            for name in names {
                let invalid = |reason: String| SpecError::Invalid { statement: statement.clone(), reason };
                let Some(f) = self.spec.fields.iter().find(|f| f.name == name) else {
                    return Err(invalid(unknown_field(&name, &self.spec.fields)));
                };
                if !matches!(f.field_type, FieldType::Integer | FieldType::Unsigned) || ![1, 2, 4, 8].contains(&f.size) {
                    return Err(invalid(format!("field '{name}' must be an integer or unsigned field of 1, 2, 4 or 8 bytes to be summed")));
                }
                self.spec.summarize.push(f.clone());
            }
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

/// Parses `-format`: (record size, record delimiter, maximum size), exactly one of the first two.
fn parse_format(st: &Statement<'_>) -> Result<(Option<usize>, Option<u8>, Option<usize>)> {
    let (mut size, mut delimiter, mut maximum) = (None, None, None);
    for item in st.items(st.value("-format=size:100")?)? {
        let text = item.value.unwrap_or_default();
        match st.word(FORMAT_WORDS, "format option", &item, |_| true)? {
            FormatWord::RecordSize => {
                let n = st.positive("the record size", text)?;
                set_once(st, &mut size, n, "the record size")?;
            }
            FormatWord::Delimiter => {
                let d = delimited::parse_char(text).map_err(|e| st.invalid(e))?;
                set_once(st, &mut delimiter, d, "the record delimiter")?;
            }
            FormatWord::MaximumSize => {
                let n = st.positive("the maximum size", text)?;
                set_once(st, &mut maximum, n, "the maximum size")?;
            }
        }
    }
    match (size, delimiter, maximum) {
        (Some(_), Some(_), _) => Err(st.invalid(
            "a record has a fixed size or ends at a delimiter, not both",
        )),
        (Some(_), None, Some(_)) => Err(st.invalid(
            "maximum_size applies to delimited records; fixed-size records have size:N",
        )),
        (None, None, _) => Err(st.invalid(
            "-format needs the record size or delimiter, as in -format=size:100 \
             or -format=delimiter:'\\n'",
        )),
        _ => Ok((size, delimiter, maximum)),
    }
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
/// Keys give delimiters only through the fields they name.
const KEY_CONTEXT: LayoutContext = LayoutContext {
    what: "key option",
    allows: |w| !matches!(w, LayoutWord::Delimiter),
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
        LayoutWord::Delimiter => {
            let d = delimited::parse_char(text).map_err(|e| st.invalid(e))?;
            set_once(st, &mut l.delimiter, d, "the delimiter")
        }
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
mod tests;
