//! `valsort [-i] [-q] [-tN] [-o SUMMARY_FILE] [-s] FILE_NAME[,opts]`, parsed.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use super::{option_letter, split_file_options, threads_from, UsageError};
use crate::validate::{KeyOrder, ValidateOptions};

/// The usage text, printed on stderr for a command line the tool refuses.
pub const USAGE: &str = "\
Valsort Sort Output Validator (xsort, compatible with valsort 1.5)

usage: valsort [-i] [-q] [-tN] [-o SUMMARY_FILE] [-s] FILE_NAME[,opts]
-i        Compare keys ignoring ASCII case (allowed for PennySort). Keys are
          otherwise compared as unsigned bytes (binary or case-sensitive ASCII).
          Only the 10-byte key is compared.
-q        Quiet: print none of the report lines; the exit status still tells.
-tN       Use N threads (default: all cores).
-o SUMMARY_FILE  Write a 280-byte summary of the validated records to
          SUMMARY_FILE. Partitions of a sort's output can be validated
          separately this way; their summaries, concatenated in partition
          order, are then checked with -s.
-s        FILE_NAME holds concatenated partition summaries, not records.
FILE_NAME[,opts] The sort output, or the summaries, to validate. Options may
          follow the name:
          ,buf            Buffered reads instead of direct I/O.
          ,dir            Direct I/O where the file system allows it (default).
          ,trans=N[k,m,g] Bytes per read request.
          ,count=N        Read requests in flight.

Example 1 - validate the order of one sort output file:
    valsort sortoutputfile

Example 2 - validate output partitioned into out0.dat .. out3.dat:
    valsort -o out0.sum out0.dat
    valsort -o out1.sum out1.dat
    valsort -o out2.sum out2.dat
    valsort -o out3.sum out3.dat
    cat out0.sum out1.sum out2.sum out3.sum > all.sum
    valsort -s all.sum

Version 1.5 (xsort-sortbench)
";

/// A parsed valsort command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValsortArgs {
    /// The records (or, with `-s`, summaries) to check.
    pub path: PathBuf,
    /// Comparison, threads and I/O.
    pub opts: ValidateOptions,
    /// `-q`: print no report lines.
    pub quiet: bool,
    /// `-s`: the input holds summaries.
    pub summaries: bool,
    /// `-o`: where to write this input's summary. The reference creates this
    /// file while parsing, before it reads anything; callers should too.
    pub summary_out: Option<PathBuf>,
}

/// Parses the arguments after the program name.
pub fn parse<I>(args: I) -> Result<ValsortArgs, UsageError>
where
    I: IntoIterator<Item = OsString>,
{
    let args: Vec<OsString> = args.into_iter().collect();
    let mut opts = ValidateOptions::default();
    let mut quiet = false;
    let mut summaries = false;
    let mut summary_out = None;
    let mut rest = &args[..];
    while let Some((arg, tail)) = rest.split_first() {
        let arg = arg.as_bytes();
        let Some(letter) = option_letter(arg) else {
            break;
        };
        match letter {
            b'i' => opts.order = KeyOrder::AsciiCaseInsensitive,
            b'q' => quiet = true,
            b's' => summaries = true,
            b't' => opts.threads = threads_from(&arg[2..]),
            b'o' => {
                // The name must not look like an option and must be followed
                // by at least one more argument (the reference's argc < 4).
                let [name, _, ..] = tail else {
                    return Err(UsageError);
                };
                if name.as_bytes().starts_with(b"-") {
                    return Err(UsageError);
                }
                summary_out = Some(PathBuf::from(OsString::from_vec(name.as_bytes().to_vec())));
                rest = &tail[1..];
                continue;
            }
            _ => return Err(UsageError),
        }
        rest = tail;
    }
    let [file] = rest else { return Err(UsageError) };
    let (path, io) = split_file_options(file.as_bytes());
    opts.io = io;
    Ok(ValsortArgs { path, opts, quiet, summaries, summary_out })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<ValsortArgs, UsageError> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn options_and_operand() {
        let a = p(&["-i", "-q", "-t2", "-o", "p.sum", "-s", "f,buf"]).expect("valid");
        assert_eq!(a.path, PathBuf::from("f"));
        assert_eq!(a.opts.order, KeyOrder::AsciiCaseInsensitive);
        assert_eq!(a.opts.threads, 2);
        assert!(a.quiet && a.summaries && !a.opts.io.direct);
        assert_eq!(a.summary_out, Some(PathBuf::from("p.sum")));
        let b = p(&["f"]).expect("valid");
        assert_eq!(b.opts, ValidateOptions::default());
        assert!(!b.quiet && !b.summaries && b.summary_out.is_none());
    }

    #[test]
    fn usage_errors() {
        assert_eq!(p(&[]), Err(UsageError));
        assert_eq!(p(&["a", "b"]), Err(UsageError));
        assert_eq!(p(&["-x", "f"]), Err(UsageError));
        assert_eq!(p(&["-o", "s.sum"]), Err(UsageError));
        assert_eq!(p(&["-o", "-q", "f"]), Err(UsageError));
        assert_eq!(p(&["-q"]), Err(UsageError));
    }
}
