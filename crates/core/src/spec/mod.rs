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
//! VALUE      := item { ',' [blanks/newlines] item }
//! item       := WORD [ ('=' | ':') TEXT ]
//! ```
//!
//! Keywords and option words are case-insensitive and may be shortened to
//! any unambiguous prefix (`-mem`, `-stat`, `-proc`, `off`, `siz`); an
//! exact spelling always wins over a prefix (`-temp` is exact). Paths,
//! field names and numbers are taken as written. Blanks and line breaks
//! (and comments) may follow a comma inside a statement, as in Nsort's own
//! examples (`transfer_size=16M, count=64`, a long statement broken after a
//! comma), and a blank may stand for the underscore of a two-word keyword
//! (`-in file=IN,transfer size=16M`, as the seed papers print NTOSort's
//! lines); anywhere else a blank ends the statement, so a path cannot
//! contain whitespace, nor a comma, because commas separate options.
//!
//! `-specification=FILE` reads FILE's statements (same syntax, comments
//! included) in its place; files may name further files, to a depth of
//! [`MAX_SPECIFICATION_DEPTH`], and a file that names itself, directly or
//! through others, is an error showing the chain. An error inside a file
//! names the file and the line where the statement starts. The path, like
//! every path of a spec, is relative to the current directory.
//!
//! Statements given as bytes (the C library's `xsort_define`) may name
//! paths that are not UTF-8, as the `xsort` command's operands may: see
//! [`bytes`]. Messages quote what was written, long text by an [`excerpt`].
//!
//! # Statements
//!
//! | statement | meaning |
//! |---|---|
//! | `-processes=N` (or `-threads=N`) | worker threads, N >= 1 |
//! | `-memory=SIZE` | memory budget: `124000M`, `2G`, `50%`; a bare number is MiB (see [`crate::size`]) |
//! | `-method=radix\|merge` | in-memory sort method |
//! | `-touch` / `-notouch` | pre-fault memory before the sort, or not |
//! | `-statistics` / `-nostatistics` | print statistics at the end, or not |
//! | `-nowarn` | print no warnings (a memory budget clamped to the machine's) |
//! | `-format=size:N` (or `record_size:N`) | fixed-size records of N bytes |
//! | `-format=delimiter:C[,maximum_size:N]` (or `record_delimiter:C`) | variable-length records, each ended by the byte C (`maximum_size:N` alone: a newline) |
//! | `-format=separator:C[,delimiter:D]` | separated records: lines (or records ended by D) whose fields are columns split by C |
//! | `-field=name:NAME,size:N,offset:N[,TYPE][,ENDIAN]` | a named field in the record |
//! | `-field=name:NAME,delimiter:C[,character\|decimal]` | a field of a delimited record, ended by the byte C |
//! | `-key=NAME[,ascending\|descending]` | sort on a field (keys in priority order) |
//! | `-key=position:P,size:N[,TYPE][,ENDIAN][,descending]` | sort on bytes not named by a field, from byte P counted from 1 (or `offset:OFF` from 0) |
//! | `-in_file=PATH[,OPTS]` | an input file; may repeat |
//! | `-out_file=PATH[,OPTS]` | the output file; a later one is another output file, which gets a copy of the sorted output |
//! | `-temp_file=DIR[,OPTS]` (also `-temp`, `-tempdir`, `-temp_dir`) | a temporary directory; may repeat |
//! | `-specification=FILE` | the statements in FILE, read in place |
//! | `-condition=name:C,test:(EXPR)` | a named condition on the fields (see [`crate::select`]) |
//! | `-include=C` / `-include=(EXPR)`, `-omit=...` | keep or drop the input records a condition holds for, in order |
//! | `-reformat=F1,F2,...` | rewrite each record as these fields (the keys' among them), as it is read |
//! | `-merge` | merge inputs each sorted by the keys, checking their order, without a sort pass |
//! | `-derived=name:D,TYPE[,size:N],value:(EXPR)` | a field computed from each record, for conditions and `-reformat` |
//!
//! Field and key words: `offset` (also `off`: the first byte, from 0), `position` (the first byte
//! counted from 1, as Nsort counts it: `position:1` is `offset:0`), `size`, the
//! types `character` (the default), `integer` (`int`), `unsigned`, `float`,
//! `double`, `decimal`, `packed`, `zoned`, `month` (see [`crate::key::coded`]), and the byte orders `big_endian`, `little_endian`
//! (binary numbers only; when absent the consumer chooses: xsort, like
//! Nsort, uses the machine's order). Binary numbers have default sizes (integer and
//! unsigned 4, of 1, 2, 4 or 8; float 4; double 8); character and decimal
//! fields need `size`. A field's offset defaults to the end of the
//! previous `-field` (0 for the first), so contiguous fields can omit it.
//! A `-key` whose first item is a bare word and which has no `word:value`
//! item names a field (`-key=key,descending`); otherwise all its items are
//! options, `name:NAME` included.
//!
//! Separated records (`-format=separator:C`, before their `-field` and `-key` statements) have
//! fields that are their columns in the order declared (`-field=name:F[,TYPE][,maximum_size:N]`,
//! text or numbers written as text), and `-key=position:N` names column N.
//!
//! A condition's parentheses and quotes hold blanks and line breaks: a statement whose '(' (or a
//! quote after it) is still open goes on past them.
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
//! flight, N >= 1; xsort keeps at most 64 in flight), and for output and temporary files `preallocate` and
//! `sync`. `preallocate` changes nothing: an output of fixed-size records whose size is known is
//! always preallocated.
//!
//! A later statement overrides an earlier one (`-touch -notouch` means
//! no touch), except that `-field`, `-key`, `-in_file` and `-temp_file`
//! accumulate, and each `-out_file` after the first names another output
//! file. Statements may come
//! in any order: fields, keys and the record size are checked against
//! each other once the whole spec is read.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;

use thiserror::Error;

use crate::size::{self, MemorySize, SizeError};

pub mod bytes;
pub mod delimited;
pub mod mapping;
mod selection;
mod statements;
mod words;

use statements::{parse_file, parse_format, parse_key, parse_layout, typed_extent, FileRole, FIELD_CONTEXT};
use words::{canonical, canonical_names, lookup, or_list, statements, Keyword, Match, KEYWORDS, METHODS};

/// Deepest nesting of `-specification` files (a file named in a file named in ...).
pub const MAX_SPECIFICATION_DEPTH: usize = 16;

/// Text of at most this many characters is quoted whole in a message; longer text by an
/// [`excerpt`].
pub const QUOTE_WHOLE_CHARS: usize = 80;

/// The characters of longer text that an [`excerpt`] keeps.
pub const EXCERPT_CHARS: usize = 60;

/// Text the user wrote, as a message quotes it: whole up to [`QUOTE_WHOLE_CHARS`] characters, else
/// its first [`EXCERPT_CHARS`] characters, "..." and its length, so that a message stays one
/// readable line whatever was written (a 1 MB statement is quoted in about 90 bytes).
pub fn excerpt(text: &str) -> Cow<'_, str> {
    if text.chars().nth(QUOTE_WHOLE_CHARS).is_none() {
        return Cow::Borrowed(text);
    }
    let cut = text.char_indices().nth(EXCERPT_CHARS).map_or(text.len(), |(i, _)| i);
    Cow::Owned(format!("{}... ({} bytes in all)", &text[..cut], bytes::written_len(text)))
}

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
    /// Packed decimal: two digits a byte, a sign nibble last (see [`crate::key::coded`]).
    Packed,
    /// Zoned decimal: a digit a byte, the sign in the last byte's zone.
    Zoned,
    /// A month's three-letter name (`JAN` to `DEC`).
    Month,
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
            FieldType::Packed => "packed",
            FieldType::Zoned => "zoned",
            FieldType::Month => "month",
        }
    }

    /// Whether the type is a binary number, the only kind with a byte order.
    pub fn is_binary_number(self) -> bool {
        matches!(self, FieldType::Integer | FieldType::Unsigned | FieldType::Float | FieldType::Double)
    }

    /// Whether the type is text, as delimited records hold it (characters, decimal numbers and
    /// month names written as text).
    pub fn is_text(self) -> bool {
        matches!(self, FieldType::Character | FieldType::Decimal | FieldType::Month)
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
    /// `compare=NAME`: keys on the field are ordered by this declared function (fixed-size
    /// records only); conditions and derived values still read the field by its type.
    pub compare: Option<crate::key::custom::ComparisonId>,
}

/// One sort key (`-key=`), resolved to its bytes in the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyDef {
    /// The field the key names, or `None` for the `position:`/`offset:` form.
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
    /// Ordered by this declared function (`compare=NAME`) rather than by the type.
    pub compare: Option<crate::key::custom::ComparisonId>,
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
    /// Add the sorted records at the end of the file rather than replace it (output only).
    pub append: bool,
}

/// Everything a spec said. `None` or empty means "not said": the
/// consumer applies its own defaults.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NsortSpec {
    /// `-processes=N` (or `-threads=N`).
    pub processes: Option<usize>,
    /// `-memory=SIZE`.
    pub memory: Option<MemorySize>,
    /// `-method=`.
    pub method: Option<Method>,
    /// `-touch` (true) or `-notouch` (false).
    pub touch: Option<bool>,
    /// `-statistics` (true) or `-nostatistics` (false).
    pub statistics: Option<bool>,
    /// `-nowarn`: no warnings (see `Sort::warnings`).
    pub nowarn: bool,
    /// `-format=size:N`: fixed record size in bytes.
    pub record_size: Option<usize>,
    /// `-format=delimiter:C`: variable-length records, each ended by this byte
    /// (never set together with `record_size`).
    pub record_delimiter: Option<u8>,
    /// `-format=...,maximum_size:N` of delimited records (accepted, not enforced).
    pub maximum_record_size: Option<usize>,
    /// `-format=separator:C`: delimited records whose fields are columns split by this byte.
    pub separator: Option<u8>,
    /// `-field` statements in the order written.
    pub fields: Vec<FieldDef>,
    /// `-key` statements in priority order (first is most significant).
    pub keys: Vec<KeyDef>,
    /// `-in_file` statements in the order written.
    pub in_files: Vec<FileSpec>,
    /// The first `-out_file`.
    pub out_file: Option<FileSpec>,
    /// The later `-out_file` statements: further output files, each a copy of the sorted output.
    pub out_copies: Vec<FileSpec>,
    /// `-match[=N]`: each output record preceded by whether its first N keys (all, without N)
    /// match the record's before it.
    pub match_mark: Option<crate::fold::MatchMark>,
    /// `-temp_file` statements in the order written.
    pub temp_dirs: Vec<FileSpec>,
    /// `-duplicates` (true) or `-noduplicates` (false: keep one record per key).
    pub duplicates: Option<bool>,
    /// `-summarize=FIELD,...`: integer fields summed over records with equal keys.
    pub summarize: Vec<FieldDef>,
    /// `-include` and `-omit` (with the `-condition`s they name): the input records kept.
    pub selection: Option<crate::select::Selection>,
    /// `-reformat=F1,F2,...`: the records rewritten as these fields when read. The spec's record
    /// size, fields and keys are then those of the rewritten records.
    pub reformat: Option<crate::select::Reformat>,
    /// With `-reformat` on fixed-size records: the size of the records read.
    pub input_record_size: Option<usize>,
    /// `-merge`: the inputs are each sorted by the keys already; they are merged, not sorted.
    pub merge: bool,
    /// `-derived` fields: computed from each record as it is read, for the selection and the
    /// reformat (through which a key may name them).
    pub derivation: Option<crate::select::Derivation>,
}

/// A spec that could not be parsed. Every message quotes the statement as
/// written (by an [`excerpt`] when it is long; the fields keep it whole) and is
/// meant to be shown to the user as is. Reasons quote what they name the same way.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SpecError {
    /// A word that does not start with '-'.
    #[error("'{}' is not an Nsort statement: statements start with a single '-', as in -memory=1G", excerpt(.token))]
    NotAStatement {
        /// The word as written.
        token: String,
    },
    /// A keyword that matches no statement.
    #[error("unknown statement '{}': expected one of {expected}", excerpt(.statement))]
    UnknownStatement {
        /// The statement as written.
        statement: String,
        /// The statements that exist.
        expected: String,
    },
    /// A keyword prefix that matches several statements.
    #[error("ambiguous statement '{}': '-{}' could be {candidates}", excerpt(.statement), excerpt(.keyword))]
    AmbiguousStatement {
        /// The statement as written.
        statement: String,
        /// The keyword as written.
        keyword: String,
        /// The statements it could mean.
        candidates: String,
    },
    /// An option word (or value word such as a method) that matches nothing.
    #[error("invalid statement '{}': unknown {what} '{}'; expected one of {expected}", excerpt(.statement), excerpt(.word))]
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
    #[error("invalid statement '{}': {what} '{}' is ambiguous; it could be {candidates}", excerpt(.statement), excerpt(.word))]
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
    #[error("invalid statement '{}': {error}", excerpt(.statement))]
    Size {
        /// The statement as written.
        statement: String,
        /// Why the size was rejected.
        error: SizeError,
    },
    /// `compare=NAME` naming no declared comparison function (Nsort's
    /// `NSORT_COMPARE_UNDECLARED`).
    #[error("invalid statement '{}': no comparison function named '{}' is declared (nsort_declare_function)", excerpt(.statement), excerpt(.name))]
    UndeclaredComparison {
        /// The statement as written.
        statement: String,
        /// The name as written.
        name: String,
    },
    /// Anything else wrong with a statement; `reason` says what.
    #[error("invalid statement '{}': {reason}", excerpt(.statement))]
    Invalid {
        /// The statement as written.
        statement: String,
        /// What is wrong and, where it helps, what was expected.
        reason: String,
    },
    /// A field or key that extends past the end of the fixed-size record (Nsort's
    /// `KEY_BEYOND_END`); `reason` gives the bytes it covers and the record's size.
    #[error("invalid statement '{}': {reason}", excerpt(.statement))]
    BeyondRecord {
        /// The statement as written.
        statement: String,
        /// Which bytes the field or key covers, and the record's size.
        reason: String,
    },
    /// An error in a statement of a `-specification` file, at the line where the statement starts.
    #[error("{}:{line}: {error}", excerpt(.path))]
    InFile {
        /// The file as its `-specification` statement names it.
        path: String,
        /// The line (from 1).
        line: usize,
        /// What is wrong with the statement.
        error: Box<SpecError>,
    },
}

impl SpecError {
    /// The statement at fault, as written; None for a statement of a `-specification` file (the
    /// error names the file and line) and for a word that is no statement.
    pub fn statement(&self) -> Option<&str> {
        match self {
            SpecError::UnknownStatement { statement, .. }
            | SpecError::AmbiguousStatement { statement, .. }
            | SpecError::UnknownWord { statement, .. }
            | SpecError::AmbiguousWord { statement, .. }
            | SpecError::Size { statement, .. }
            | SpecError::Invalid { statement, .. }
            | SpecError::UndeclaredComparison { statement, .. }
            | SpecError::BeyondRecord { statement, .. } => Some(statement),
            SpecError::NotAStatement { token } => Some(token),
            SpecError::InFile { .. } => None,
        }
    }

    /// The error, naming the file and line of its statement when the statement was read from a
    /// `-specification` file (`origins`: each such statement's text, file and line). For errors
    /// found once every statement is known: a key naming no field, a field past the record.
    fn located(self, origins: &[(String, String, usize)]) -> SpecError {
        let (SpecError::Invalid { statement, .. } | SpecError::BeyondRecord { statement, .. }) = &self else { return self };
        match origins.iter().find(|(text, ..)| text == statement) {
            Some((_, path, line)) => SpecError::InFile { path: path.clone(), line: *line, error: Box::new(self) },
            None => self,
        }
    }
}

type Result<T, E = SpecError> = std::result::Result<T, E>;

/// Parses a whole spec (any number of statements, comments, newlines), reading the files its
/// `-specification` statements name. Empty text gives `NsortSpec::default()`.
pub fn parse_spec(text: &str) -> Result<NsortSpec> {
    let mut builder = Builder::default();
    builder.read(text)?;
    let origins = std::mem::take(&mut builder.origins);
    builder.finish().map_err(|e| e.located(&origins))
}

/// Whether a command-line argument reads as an Nsort statement where statements and POSIX sort
/// options mix (the `nsort` command): `-WORD` or `-WORD=...`/`-WORD:...` where WORD, of letters and
/// underscores, is a statement's keyword or, at three letters or more, begins one (`-mem=1g`,
/// `-stat`). One-letter and two-letter options (`-k1`, `-nr`, `-o`) are sort's.
pub fn is_statement(arg: &str) -> bool {
    let Some(body) = arg.strip_prefix('-').filter(|b| !b.starts_with('-')) else { return false };
    let word = split_sep(body).0;
    if word.is_empty() || !word.bytes().all(|c| c.is_ascii_alphabetic() || c == b'_') {
        return false;
    }
    let exact = KEYWORDS.iter().any(|(k, _)| k.eq_ignore_ascii_case(word));
    exact || (word.len() >= 3 && !matches!(lookup(KEYWORDS, word), Match::Unknown))
}

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
            _ => return Err(SpecError::NotAStatement { token: text.to_string() }),
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
        Ok(Statement { text, keyword, value })
    }

    fn invalid(&self, reason: impl Into<String>) -> SpecError {
        SpecError::Invalid { statement: self.text.to_string(), reason: reason.into() }
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
        delimited::split_items(value).into_iter().map(|piece| self.item(piece)).collect()
    }

    fn item(&self, piece: &'a str) -> Result<Item<'a>> {
        if piece.is_empty() {
            return Err(self.invalid("empty option (two commas in a row, or a comma at an end)"));
        }
        let (word, value) = split_sep(piece);
        if value == Some("") {
            return Err(self.invalid(format!("'{}' needs a value after '{}'", excerpt(word), &piece[word.len()..])));
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

    fn lookup_word<T: Copy + PartialEq>(&self, table: &[(&'static str, T)], what: &str, word: &str) -> Result<T> {
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
            return Err(self.invalid(format!("{what} must be a whole number, not '{}'", excerpt(text))));
        }
        text.parse().map_err(|_| self.invalid(format!("{what} '{}' is too large", excerpt(text))))
    }

    fn size_error(&self, error: SizeError) -> SpecError {
        SpecError::Size { statement: self.text.to_string(), error: bounded_size_error(error) }
    }
}

// ---------------------------------------------------------------------
// Building the spec

/// A `-key` as parsed; a named one is resolved once all fields are known.
enum PendingKey {
    Named { statement: String, name: String, descending: bool },
    Positional { statement: String, key: KeyDef },
}

impl PendingKey {
    fn statement(&self) -> &str {
        match self {
            PendingKey::Named { statement, .. } | PendingKey::Positional { statement, .. } => statement,
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
    maximum_size: Option<usize>,
    compare: Option<crate::key::custom::ComparisonId>,
}

#[derive(Default)]
struct Builder {
    spec: NsortSpec,
    /// The statement text of each entry of `spec.fields`, for messages.
    field_statements: Vec<String>,
    keys: Vec<PendingKey>,
    /// `-summarize` statements and the field names they list, resolved at the end.
    summarize: Vec<(String, Vec<String>)>,
    /// The `-specification` files being read, outermost first: each as named and its canonical
    /// path (to find loops).
    files: Vec<(String, PathBuf)>,
    /// Each statement read from a file: its text, the file and the line, for the errors found
    /// after every statement is read.
    origins: Vec<(String, String, usize)>,
    /// `-condition` statements, resolved at the end.
    conditions: Vec<selection::NamedCondition>,
    /// `-include` and `-omit` statements in order, resolved at the end.
    steps: Vec<selection::SelectStep>,
    /// The `-reformat` statement and its field names, applied at the end.
    reformat: Option<(String, Vec<String>)>,
    /// `-derived` statements, resolved at the end.
    derived: Vec<selection::NamedDerived>,
}

impl Builder {
    /// Applies the statements of `text`: the spec, or the innermost file of `self.files`, whose
    /// errors then name the file and line.
    fn read(&mut self, text: &str) -> Result<()> {
        for w in statements(text) {
            let applied = Statement::split(&w.text).and_then(|st| self.apply_written(&st));
            match (applied, self.files.last()) {
                (Ok(()), Some((path, _))) => self.origins.push((w.text, path.clone(), w.line)),
                (Ok(()), None) => {}
                (Err(e @ SpecError::InFile { .. }), _) | (Err(e), None) => return Err(e),
                (Err(e), Some((path, _))) => return Err(SpecError::InFile { path: path.clone(), line: w.line, error: Box::new(e) }),
            }
        }
        Ok(())
    }

    /// `-specification=FILE`: reads FILE's statements as if written in place of this one. A path
    /// is taken as written (relative to the current directory, like every path of a spec). A file
    /// that names itself, directly or through others, is an error showing the chain.
    fn include(&mut self, st: &Statement<'_>) -> Result<()> {
        let path = st.value("-specification=sort.spec")?;
        let chain = |files: &[(String, PathBuf)]| {
            let names: Vec<Cow<'_, str>> = files.iter().map(|(p, _)| excerpt(p)).chain([excerpt(path)]).collect();
            names.join(" -> ")
        };
        let cannot_read = |e: std::io::Error| st.invalid(format!("cannot read '{}': {}", excerpt(path), xsort_io::error::os_text(&e)));
        let canonical = std::fs::canonicalize(bytes::path(path)).map_err(cannot_read)?;
        if self.files.iter().any(|(_, c)| *c == canonical) {
            return Err(st.invalid(format!("'{}' includes itself: {}", excerpt(path), chain(&self.files))));
        }
        if self.files.len() >= MAX_SPECIFICATION_DEPTH {
            return Err(st.invalid(format!("specification files nest more than {MAX_SPECIFICATION_DEPTH} deep: {}", chain(&self.files))));
        }
        let bytes = std::fs::read(&canonical).map_err(cannot_read)?;
        let text = bytes::file_text(bytes).ok_or_else(|| st.invalid(format!("'{}' is not text (it is not UTF-8)", excerpt(path))))?;
        self.files.push((path.to_string(), canonical));
        let read = self.read(&text);
        self.files.pop();
        read
    }

    /// Applies a statement as written. Statements given as bytes ([`bytes::with_byte_paths`]) may
    /// hold bytes that are not UTF-8 in a path only: any other statement must be text.
    fn apply_written(&mut self, st: &Statement<'_>) -> Result<()> {
        if matches!(st.keyword, Keyword::InFile | Keyword::OutFile | Keyword::TempFile | Keyword::Specification) {
            return self.apply(st);
        }
        match bytes::plain_text(st.text) {
            Ok(None) => self.apply(st),
            Ok(Some(text)) => self.apply(&Statement::split(&text)?),
            Err(()) => Err(st.invalid(format!(
                "{} is not UTF-8 text; only the paths of -in_file, -out_file, -temp_file and -specification may hold other bytes",
                st.name()
            ))),
        }
    }

    fn apply(&mut self, st: &Statement<'_>) -> Result<()> {
        match st.keyword {
            Keyword::Processes => self.spec.processes = Some(st.positive("processes", st.value("-processes=16")?)?),
            Keyword::Memory => {
                let v = st.value("-memory=4G")?;
                self.spec.memory = Some(size::parse_nsort_memory_size(v).map_err(|e| st.size_error(e))?);
            }
            Keyword::Method => self.spec.method = Some(st.lookup_word(METHODS, "method", st.value("-method=radix")?)?),
            Keyword::Touch | Keyword::NoTouch => {
                st.no_value()?;
                self.spec.touch = Some(st.keyword == Keyword::Touch);
            }
            Keyword::Statistics | Keyword::NoStatistics => {
                st.no_value()?;
                self.spec.statistics = Some(st.keyword == Keyword::Statistics);
            }
            Keyword::NoWarn => {
                st.no_value()?;
                self.spec.nowarn = true;
            }
            Keyword::Format => {
                let format = parse_format(st)?;
                if format.separator.is_some() && (!self.spec.fields.is_empty() || !self.keys.is_empty()) {
                    return Err(st.invalid("-format=separator must come before the -field and -key statements (fields are its columns)"));
                }
                self.spec.record_size = format.size;
                self.spec.record_delimiter = format.delimiter;
                self.spec.maximum_record_size = format.maximum;
                self.spec.separator = format.separator;
            }
            Keyword::Field => self.add_field(st)?,
            Keyword::Key => self.keys.push(parse_key(st, self.spec.separator.is_some())?),
            Keyword::InFile => self.spec.in_files.push(parse_file(st, FileRole::Input)?),
            Keyword::OutFile => self.set_out_file(st)?,
            Keyword::TempFile => self.spec.temp_dirs.push(parse_file(st, FileRole::Temp)?),
            Keyword::Duplicates | Keyword::NoDuplicates => {
                st.no_value()?;
                self.spec.duplicates = Some(st.keyword == Keyword::Duplicates);
            }
            Keyword::Summarize => {
                let names = st.value("-summarize=count,total")?;
                self.summarize.push((st.text.to_string(), names.split(',').map(|n| n.trim().to_string()).collect()));
            }
            Keyword::Specification => self.include(st)?,
            Keyword::Condition => self.conditions.push(selection::parse_condition(st)?),
            Keyword::Include | Keyword::Omit => self.steps.push(selection::parse_step(st, st.keyword == Keyword::Include)?),
            Keyword::Derived => self.derived.push(selection::parse_derived(st)?),
            Keyword::Merge => {
                st.no_value()?;
                self.spec.merge = true;
            }
            Keyword::Match => {
                let keys = st.value.map(|n| st.positive("-match=N (the keys compared)", n)).transpose()?;
                self.spec.match_mark = Some(crate::fold::MatchMark { keys });
            }
            Keyword::Reformat => {
                let names: Vec<String> = st.items(st.value("-reformat=key,amount")?)?.iter().map(|i| i.word.to_string()).collect();
                if let Some((prev, _)) = &self.reformat {
                    return Err(st.invalid(format!("only one -reformat is allowed, and '{}' came first", excerpt(prev))));
                }
                self.reformat = Some((st.text.to_string(), names));
            }
        }
        Ok(())
    }

    fn add_field(&mut self, st: &Statement<'_>) -> Result<()> {
        let layout = parse_layout(st, st.value("-field=name:key,size:10,offset:0")?, FIELD_CONTEXT)?;
        let Some(name) = layout.name.clone() else {
            return Err(st.invalid("-field needs a name, as in name:key"));
        };
        if self.spec.fields.iter().any(|f| f.name == name) {
            return Err(st.invalid(format!("a field named '{}' is already defined", excerpt(&name))));
        }
        if let Some(separator) = self.spec.separator {
            let field_type = statements::separated_type(st, &layout)?;
            if layout.offset.is_some() {
                return Err(st.invalid("the fields of separated records are their columns, in the order declared: they take no position"));
            }
            self.spec.fields.push(FieldDef {
                name,
                offset: 0,
                size: 0,
                field_type,
                endian: None,
                delimiter: Some(separator),
                compare: None,
            });
            self.field_statements.push(st.text.to_string());
            return Ok(());
        }
        if layout.maximum_size.is_some() {
            return Err(st.invalid("maximum_size applies to the fields of separated records (-format=separator:C)"));
        }
        if let Some(delimiter) = layout.delimiter {
            let field_type = delimited::field_type(st, &layout)?;
            statements::refuse_compare(st, &layout)?;
            let compare = None;
            self.spec.fields.push(FieldDef { name, offset: 0, size: 0, field_type, endian: None, delimiter: Some(delimiter), compare });
            self.field_statements.push(st.text.to_string());
            return Ok(());
        }
        // Contiguous fields may omit offsets, as in Nsort.
        let next = self.spec.fields.last().map_or(Some(0), |f| f.offset.checked_add(f.size));
        let offset = match layout.offset.or(next) {
            Some(o) => o,
            None => return Err(st.invalid("the previous field ends past the largest possible offset")),
        };
        let (field_type, size, endian) = typed_extent(st, &layout)?;
        self.spec.fields.push(FieldDef { name, offset, size, field_type, endian, delimiter: None, compare: layout.compare });
        self.field_statements.push(st.text.to_string());
        Ok(())
    }

    fn set_out_file(&mut self, st: &Statement<'_>) -> Result<()> {
        let file = parse_file(st, FileRole::Output)?;
        if self.spec.out_file.iter().chain(&self.spec.out_copies).any(|f| f.path == file.path) {
            return Err(st.invalid(format!("'{}' is already an output file", excerpt(&file.path.to_string_lossy()))));
        }
        match self.spec.out_file {
            None => self.spec.out_file = Some(file),
            Some(_) => self.spec.out_copies.push(file),
        }
        Ok(())
    }

    /// Resolves keys and checks extents now that every statement is known.
    fn finish(mut self) -> Result<NsortSpec> {
        for (field, text) in self.spec.fields.iter().zip(&self.field_statements) {
            check_extent(text, field.offset, field.size, self.spec.record_size, "field")?;
        }
        let (derived, access, derivation) = selection::derive(&self.spec, &self.derived)?;
        let mut key_statements = Vec::new();
        for pending in std::mem::take(&mut self.keys) {
            let key = match self.resolve_key(&pending) {
                // A key on a derived field sorts the records that -reformat writes it into.
                Err(e) => self.derived_key(&pending, &derived).ok_or(e)??,
                Ok(key) => {
                    check_extent(pending.statement(), key.offset, key.size, self.spec.record_size, "key")?;
                    key
                }
            };
            if key.compare.is_some() && self.spec.record_size.is_none() {
                let reason = "compare=NAME applies to the keys of fixed-size records (-format=size:N)".to_string();
                return Err(SpecError::Invalid { statement: pending.statement().to_string(), reason });
            }
            self.spec.keys.push(key);
            key_statements.push(pending.statement().to_string());
        }
        delimited::check(&self.spec, &self.field_statements, &key_statements, self.summarize.first().map(|(s, _)| s.as_str()))?;
        for (statement, names) in std::mem::take(&mut self.summarize) {
            for name in names {
                let invalid = |reason: String| SpecError::Invalid { statement: statement.clone(), reason };
                let Some(f) = self.spec.fields.iter().find(|f| f.name == name) else {
                    return Err(invalid(unknown_field(&name, &self.spec.fields)));
                };
                if !matches!(f.field_type, FieldType::Integer | FieldType::Unsigned) || ![1, 2, 4, 8].contains(&f.size) {
                    return Err(invalid(format!(
                        "field '{}' must be an integer or unsigned field of 1, 2, 4 or 8 bytes to be summed",
                        excerpt(&name)
                    )));
                }
                self.spec.summarize.push(f.clone());
            }
        }
        self.spec.selection = selection::resolve(&access, &self.conditions, &self.steps)?;
        if let Some((statement, names)) = self.reformat.take() {
            let (reformat, input_size) = selection::reformat(&mut self.spec, (&statement, &names), &derived, &access)?;
            self.spec.reformat = Some(reformat);
            self.spec.input_record_size = input_size;
        }
        self.spec.derivation = derivation;
        Ok(self.spec)
    }

    /// The key of `pending` when it names a derived field: it needs `-reformat` to write the field
    /// into the records sorted (Nsort's `NSORT_IMPLICIT_DERIVED_REFORMAT`); None when it names no
    /// derived field.
    fn derived_key(&self, pending: &PendingKey, derived: &[FieldDef]) -> Option<Result<KeyDef>> {
        let PendingKey::Named { statement, name, descending } = pending else { return None };
        let f = derived.iter().find(|f| &f.name == name)?;
        if self.reformat.is_none() {
            let reason = format!("a key on the derived field '{}' needs -reformat to write it into the records sorted", excerpt(name));
            return Some(Err(SpecError::Invalid { statement: statement.clone(), reason }));
        }
        let (field_type, endian) = (f.field_type, f.endian);
        Some(Ok(KeyDef { field: Some(name.clone()), offset: 0, size: f.size, field_type, endian, descending: *descending, compare: None }))
    }

    fn resolve_key(&self, pending: &PendingKey) -> Result<KeyDef> {
        let (statement, name, descending) = match pending {
            PendingKey::Positional { key, .. } => return Ok(key.clone()),
            PendingKey::Named { statement, name, descending } => (statement, name, *descending),
        };
        let Some(f) = self.spec.fields.iter().find(|f| &f.name == name) else {
            let reason = unknown_field(name, &self.spec.fields);
            return Err(SpecError::Invalid { statement: statement.clone(), reason });
        };
        let (field_type, endian, compare) = (f.field_type, f.endian, f.compare);
        Ok(KeyDef { field: Some(f.name.clone()), offset: f.offset, size: f.size, field_type, endian, descending, compare })
    }
}

fn unknown_field(name: &str, fields: &[FieldDef]) -> String {
    let name = excerpt(name);
    if fields.is_empty() {
        return format!("no -field is named '{name}' (no fields are defined; field names are case-sensitive)");
    }
    let names: Vec<Cow<'_, str>> = fields.iter().map(|f| excerpt(&f.name)).collect();
    format!("no -field is named '{name}'; the fields are {} (names are case-sensitive)", names.join(", "))
}

/// A size error whose message quotes the size by an [`excerpt`], as the statement is quoted (the
/// size module quotes what it is given whole).
fn bounded_size_error(error: SizeError) -> SizeError {
    let cut = |text: String| excerpt(&text).into_owned();
    match error {
        SizeError::Empty => SizeError::Empty,
        SizeError::Negative(t) => SizeError::Negative(cut(t)),
        SizeError::NotANumber(t) => SizeError::NotANumber(cut(t)),
        SizeError::UnknownUnit { input, unit } => SizeError::UnknownUnit { input: cut(input), unit: cut(unit) },
        SizeError::Zero(t) => SizeError::Zero(cut(t)),
        SizeError::TooLarge(t) => SizeError::TooLarge(cut(t)),
        SizeError::PercentOutOfRange(t) => SizeError::PercentOutOfRange(cut(t)),
        SizeError::PercentNotAllowed(t) => SizeError::PercentNotAllowed(cut(t)),
    }
}

/// Checks that bytes `offset..offset+size` lie inside the record.
fn check_extent(statement: &str, offset: usize, size: usize, record: Option<usize>, what: &str) -> Result<()> {
    let err = |reason: String| SpecError::Invalid { statement: statement.to_string(), reason };
    let Some(end) = offset.checked_add(size) else {
        return Err(err(format!("the {what} ends past the largest possible record")));
    };
    match record {
        Some(r) if end > r => Err(SpecError::BeyondRecord {
            statement: statement.to_string(),
            reason: format!("the {what} covers bytes {offset}..{end}, past the end of the {r}-byte record (-format=size:{r})"),
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod record_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod written_tests;
