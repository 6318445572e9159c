//! Status codes, with Nsort's values (`nsort_msg_t`): 0 success, 1 end of output, small positive
//! numbers warnings (the sort goes on), negative numbers errors (the sort will not go on, unless
//! the call only asked for the statistics or the output had already ended: see `Context::refuse`).
//! The `XSORT_*` constants equal the `NSORT_*` ones of the same name, so a program ports by renaming;
//! the codes below -1000 are xsort's own, for failures that Nsort's list has no number for.

use std::os::raw::c_int;

use crate::engine::{SortError, SpecError};

/// A status returned by the `nsort_*` calls (Nsort's `nsort_msg_t`).
#[allow(non_camel_case_types)]
pub type nsort_msg_t = c_int;
/// A status returned by the `xsort_*` calls; the same values as `nsort_msg_t`.
#[allow(non_camel_case_types)]
pub type xsort_msg_t = c_int;

/// The call succeeded.
pub const XSORT_SUCCESS: xsort_msg_t = 0;
/// No more records to return; `*size` is 0.
pub const XSORT_END_OF_OUTPUT: xsort_msg_t = 1;
/// The return buffer cannot hold the next record; nothing was returned and the sort goes on.
pub const XSORT_RETURN_BUF_SMALL: xsort_msg_t = 23;
/// Records were released to a sort that reads `-in_file`; they were not taken.
pub const XSORT_NO_CLIENT_INPUT: xsort_msg_t = 27;
/// Records were asked of a sort that writes `-out_file`; nothing was returned.
pub const XSORT_NO_CLIENT_OUTPUT: xsort_msg_t = 28;
/// A statement or keyword that does not exist (or an ambiguous abbreviation).
pub const XSORT_UNKNOWN_KEYWORD: xsort_msg_t = -9;
/// A released size that is not a whole number of records.
pub const XSORT_PARTIAL_RECORD: xsort_msg_t = -86;
/// A context that was never defined, or was ended.
pub const XSORT_INVALID_CONTEXT: xsort_msg_t = -103;
/// A NULL pointer where one is needed, or a value out of range.
pub const XSORT_INVALID_ARGUMENT: xsort_msg_t = -104;
/// A key that extends past the end of the record.
pub const XSORT_KEY_BEYOND_END: xsort_msg_t = -109;
/// An input of `-merge` holds a record that orders before the one ahead of it.
pub const XSORT_MERGE_MISORDERED: xsort_msg_t = -123;
/// A merge's width does not count its inputs (`nsort_merge_define`).
pub const XSORT_BAD_MERGE_WIDTH: xsort_msg_t = -192;
/// `compare=NAME` names no function declared with `nsort_declare_function`.
pub const XSORT_COMPARE_UNDECLARED: xsort_msg_t = -187;
/// A declared comparison function raised an error (`nsort_raise_error`): the sort stopped.
pub const XSORT_USER_RAISED_ERROR: xsort_msg_t = -213;
/// The file of `-out_file=PATH,append` changed while the sort ran: nothing was appended.
pub const XSORT_APPEND_CHANGED: xsort_msg_t = -125;
/// A syntax error (or an invalid value) in a statement.
pub const XSORT_SYNTAX_ERROR: xsort_msg_t = -116;
/// A call out of sequence (records released after `xsort_release_end`, returned before it...).
pub const XSORT_INVALID_PHASE: xsort_msg_t = -183;
/// xsort's own: statements that parse but cannot make a sort (no `-format`, a zero size...).
pub const XSORT_CONFIG_ERROR: xsort_msg_t = -1001;
/// xsort's own: an I/O failure (a file, the temp space); the message names the file.
pub const XSORT_IO_ERROR: xsort_msg_t = -1002;
/// xsort's own: a malformed `-in_file` (e.g. not a whole number of records).
pub const XSORT_BAD_INPUT: xsort_msg_t = -1003;
/// xsort's own: an external program (a compress program) failed.
pub const XSORT_PROGRAM_ERROR: xsort_msg_t = -1004;
/// xsort's own: a bug in xsort (a panic caught at the C boundary included).
pub const XSORT_INTERNAL_ERROR: xsort_msg_t = -1005;

/// xsort's own: the system refused a resource the sort needs (a thread, memory).
pub const XSORT_RESOURCE_ERROR: xsort_msg_t = -1006;

/// `NSORT_SUCCESS`, as in Nsort's `nsorterrno.h`.
pub const NSORT_SUCCESS: nsort_msg_t = 0;
/// `NSORT_END_OF_OUTPUT`.
pub const NSORT_END_OF_OUTPUT: nsort_msg_t = 1;
/// `NSORT_RETURN_BUF_SMALL`.
pub const NSORT_RETURN_BUF_SMALL: nsort_msg_t = 23;
/// `NSORT_NO_CLIENT_INPUT`.
pub const NSORT_NO_CLIENT_INPUT: nsort_msg_t = 27;
/// `NSORT_NO_CLIENT_OUTPUT`.
pub const NSORT_NO_CLIENT_OUTPUT: nsort_msg_t = 28;
/// `NSORT_UNKNOWN_KEYWORD`.
pub const NSORT_UNKNOWN_KEYWORD: nsort_msg_t = -9;
/// `NSORT_PARTIAL_RECORD`.
pub const NSORT_PARTIAL_RECORD: nsort_msg_t = -86;
/// `NSORT_INVALID_CONTEXT`.
pub const NSORT_INVALID_CONTEXT: nsort_msg_t = -103;
/// `NSORT_INVALID_ARGUMENT`.
pub const NSORT_INVALID_ARGUMENT: nsort_msg_t = -104;
/// `NSORT_KEY_BEYOND_END`.
pub const NSORT_KEY_BEYOND_END: nsort_msg_t = -109;
/// `NSORT_SYNTAX_ERROR`.
pub const NSORT_SYNTAX_ERROR: nsort_msg_t = -116;
/// `NSORT_INVALID_PHASE`.
pub const NSORT_INVALID_PHASE: nsort_msg_t = -183;
/// `NSORT_MERGE_MISORDERED`.
pub const NSORT_MERGE_MISORDERED: nsort_msg_t = -123;
/// `NSORT_BAD_MERGE_WIDTH`.
pub const NSORT_BAD_MERGE_WIDTH: nsort_msg_t = -192;
/// `NSORT_COMPARE_UNDECLARED`.
pub const NSORT_COMPARE_UNDECLARED: nsort_msg_t = -187;
/// `NSORT_USER_RAISED_ERROR`.
pub const NSORT_USER_RAISED_ERROR: nsort_msg_t = -213;
/// `NSORT_APPEND_CHANGED`.
pub const NSORT_APPEND_CHANGED: nsort_msg_t = -125;

/// Every `NSORT_*` value equals its `XSORT_*` namesake. The C headers give both as numbers
/// (xsort.h, and the hand-written nsorterrno.h that nsort.h includes, which holds all of Nsort's
/// codes): tests/header.rs checks nsorterrno.h against these.
const _: () = {
    assert!(NSORT_SUCCESS == XSORT_SUCCESS && NSORT_END_OF_OUTPUT == XSORT_END_OF_OUTPUT);
    assert!(NSORT_RETURN_BUF_SMALL == XSORT_RETURN_BUF_SMALL && NSORT_NO_CLIENT_INPUT == XSORT_NO_CLIENT_INPUT);
    assert!(NSORT_NO_CLIENT_OUTPUT == XSORT_NO_CLIENT_OUTPUT && NSORT_UNKNOWN_KEYWORD == XSORT_UNKNOWN_KEYWORD);
    assert!(NSORT_PARTIAL_RECORD == XSORT_PARTIAL_RECORD && NSORT_INVALID_CONTEXT == XSORT_INVALID_CONTEXT);
    assert!(NSORT_INVALID_ARGUMENT == XSORT_INVALID_ARGUMENT && NSORT_KEY_BEYOND_END == XSORT_KEY_BEYOND_END);
    assert!(NSORT_SYNTAX_ERROR == XSORT_SYNTAX_ERROR && NSORT_INVALID_PHASE == XSORT_INVALID_PHASE);
    assert!(NSORT_MERGE_MISORDERED == XSORT_MERGE_MISORDERED && NSORT_BAD_MERGE_WIDTH == XSORT_BAD_MERGE_WIDTH);
    assert!(NSORT_COMPARE_UNDECLARED == XSORT_COMPARE_UNDECLARED && NSORT_USER_RAISED_ERROR == XSORT_USER_RAISED_ERROR);
    assert!(NSORT_APPEND_CHANGED == XSORT_APPEND_CHANGED);
};

/// A refused or failed call: the code to return and the message `xsort_message` will show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// One of the codes above.
    pub code: xsort_msg_t,
    /// One line (newlines are joined by `open_line` when stored).
    pub message: String,
    /// For a statement that did not parse: the statement, as the parser split it (the error
    /// callback is given its offset in the definition).
    pub statement: Option<String>,
}

impl Failure {
    /// A failure with `code` and `message`.
    pub fn new(code: xsort_msg_t, message: impl Into<String>) -> Failure {
        Failure { code, message: message.into(), statement: None }
    }

    /// Whether the code is an error, after which the sort does not go on (warnings are positive).
    pub fn is_error(&self) -> bool {
        self.code < 0
    }
}

impl From<SortError> for Failure {
    fn from(e: SortError) -> Failure {
        let code = match &e {
            SortError::Spec(s) => spec_code(s),
            SortError::Usage(_) => XSORT_INVALID_PHASE,
            SortError::BadOption(_) | SortError::InvalidArgument { .. } | SortError::RecordTooLarge { .. } => XSORT_CONFIG_ERROR,
            SortError::Io(xsort_io::IoError::AppendChanged { .. }) => XSORT_APPEND_CHANGED,
            SortError::Io(_) => XSORT_IO_ERROR,
            SortError::BadInput { .. } => XSORT_BAD_INPUT,
            SortError::MergeMisordered { .. } => XSORT_MERGE_MISORDERED,
            SortError::Comparison(_) => XSORT_USER_RAISED_ERROR,
            SortError::Program(_) => XSORT_PROGRAM_ERROR,
            SortError::Resource(_) => XSORT_RESOURCE_ERROR,
            // The C API has no call that cancels a sort: a cancelled one would be a bug.
            SortError::Internal(_) | SortError::Cancelled => XSORT_INTERNAL_ERROR,
            _ => XSORT_INTERNAL_ERROR,
        };
        let statement = match &e {
            SortError::Spec(s) => s.statement().map(str::to_string),
            _ => None,
        };
        Failure { statement, ..Failure::new(code, e.to_string()) }
    }
}

/// Nsort's code for a statement that did not parse: a word that names no statement is an unknown
/// keyword, anything else wrong inside a statement a syntax error.
fn spec_code(e: &SpecError) -> xsort_msg_t {
    match e {
        SpecError::UnknownStatement { .. } | SpecError::NotAStatement { .. } | SpecError::AmbiguousStatement { .. } => {
            XSORT_UNKNOWN_KEYWORD
        }
        SpecError::InFile { error, .. } => spec_code(error),
        SpecError::BeyondRecord { .. } => XSORT_KEY_BEYOND_END,
        SpecError::UndeclaredComparison { .. } => XSORT_COMPARE_UNDECLARED,
        _ => XSORT_SYNTAX_ERROR,
    }
}
