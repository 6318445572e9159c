//! `gensort [-a] [-c] [-bN] [-s] [-tN] NUM_RECS FILE_NAME[,opts]`, parsed.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::{option_letter, parse_decimal, split_file_options, threads_from, UsageError};
use crate::generate::{GenOptions, GenerateJob};

/// The usage text, printed on stderr for a command line the tool refuses.
pub const USAGE: &str = "\
Gensort Sort Input Generator (xsort, compatible with gensort 1.5)

usage: gensort [-a] [-c] [-bSTARTING_REC_NUM] [-s] [-tN] NUM_RECS FILE_NAME[,opts]
-a        Generate ASCII records, as PennySort and JouleSort require. They are
          an alternative input for the other benchmarks too. Without -a the
          records are binary, with the most randomness in the 10-byte key.
-c        Compute the sum of the CRC-32 checksums of the generated records
          and print it, in hex, on standard error.
-bN       Start at record number N (default 0). N may exceed 2^64; any
          partitions made this way concatenate to the single file.
-s        Generate records with skewed keys; with -a, skewed ASCII records.
-tN       Use N threads (default: all cores). The output does not depend on N.
NUM_RECS  The number of consecutive records to generate.
FILE_NAME[,opts] The file to write, created or truncated (/dev/null: nothing
          is written, -c still computes). Options may follow the name:
          ,buf            Buffered writes instead of direct I/O.
          ,dir            Direct I/O where the file system allows it (default).
          ,trans=N[k,m,g] Bytes per write request.
          ,count=N        Write requests in flight.

Example 1 - generate 1000000 ASCII records, starting at record 0, into the
file \"pennyinput\":
    gensort -a 1000000 pennyinput

Example 2 - generate 1000 binary records, starting at record 2000, into the
file \"partition2\":
    gensort -b2000 1000 partition2

Version 1.5 (xsort-sortbench)
";

/// A parsed gensort command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GensortArgs {
    /// What to generate and how.
    pub job: GenerateJob,
    /// Where to write it.
    pub path: PathBuf,
}

/// Parses the arguments after the program name.
///
/// `NUM_RECS` is taken mod 2^64, as the reference's loop counter is 64-bit.
pub fn parse<I>(args: I) -> Result<GensortArgs, UsageError>
where
    I: IntoIterator<Item = OsString>,
{
    let args: Vec<OsString> = args.into_iter().collect();
    let mut opts = GenOptions::default();
    let mut first_record = 0u128;
    let mut checksum = false;
    let mut threads = 0;
    let mut rest = &args[..];
    while let Some((arg, tail)) = rest.split_first() {
        let arg = arg.as_bytes();
        let Some(letter) = option_letter(arg) else {
            break;
        };
        match letter {
            b'a' => opts.ascii = true,
            b'b' => first_record = parse_decimal(&arg[2..]),
            b'c' => checksum = true,
            b's' => opts.skew = true,
            b't' => threads = threads_from(&arg[2..]),
            _ => return Err(UsageError),
        }
        rest = tail;
    }
    let [num_recs, file] = rest else {
        return Err(UsageError);
    };
    let count = parse_decimal(num_recs.as_bytes()) as u64;
    let (path, io) = split_file_options(file.as_bytes());
    let job = GenerateJob { first_record, count, opts, threads, checksum, io };
    Ok(GensortArgs { job, path })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<GensortArgs, UsageError> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn options_and_operands() {
        let a = p(&["-a", "-c", "-b500", "-s", "-t3", "1000", "f"]).expect("valid");
        assert_eq!(a.path, PathBuf::from("f"));
        assert_eq!(a.job.first_record, 500);
        assert_eq!(a.job.count, 1000);
        assert!(a.job.opts.ascii && a.job.opts.skew && a.job.checksum);
        assert_eq!(a.job.threads, 3);
        let b = p(&["-b18446744073709551616000", "1", "f"]).expect("valid");
        assert_eq!(b.job.first_record, 18_446_744_073_709_551_616_000);
        assert!(!b.job.checksum && !b.job.opts.ascii);
    }

    #[test]
    fn usage_errors() {
        assert_eq!(p(&[]), Err(UsageError));
        assert_eq!(p(&["1000"]), Err(UsageError));
        assert_eq!(p(&["1000", "f", "g"]), Err(UsageError));
        assert_eq!(p(&["-x", "1000", "f"]), Err(UsageError));
        assert_eq!(p(&["-", "1000", "f"]), Err(UsageError));
        assert_eq!(p(&["--help"]), Err(UsageError));
        assert_eq!(p(&["-a", "-1000", "f"]), Err(UsageError));
    }

    #[test]
    fn reference_quirks() {
        // Only the letter after the dash counts; numbers stop at a non-digit.
        let a = p(&["-ascii", "-count", "12abc", "f"]).expect("valid");
        assert!(a.job.opts.ascii && a.job.checksum);
        assert_eq!(a.job.count, 12);
        assert_eq!(p(&["x", "f"]).expect("valid").job.count, 0);
    }
}
