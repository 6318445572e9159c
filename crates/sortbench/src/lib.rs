//! Sort Benchmark data tools: `gensort` and `valsort` 1.5, byte for byte, as a
//! library and two thin binaries.
//!
//! * Generation: [`fill_records`] writes records `first, first+1, ...` into
//!   any buffer (in parallel on the current rayon pool, same bytes for any
//!   split); [`fill_records_checksum`] also returns their checksum;
//!   [`generated_checksum`] computes the checksum without keeping the
//!   records; [`generate_file`] / [`generate_with`] write a file with large
//!   direct I/O and return the checksum `gensort -c` prints.
//! * Checksums: [`record_crc`] (zlib CRC-32) and [`checksum_of`] (the sum of
//!   the CRC-32 of each 100-byte record, mod 2^128, independent of order).
//! * Validation: [`validate_bytes`] / [`validate_file`] return a [`Summary`]
//!   (counts, checksum, first and last record); [`Summary::to_bytes`] and
//!   [`Summary::from_bytes`] are the reference's 280-byte summary format,
//!   [`combine_summaries`] is `valsort -s`, and [`Summary::report`] renders
//!   the exact lines valsort prints.
//! * [`cli`]: the reference-compatible command lines, parsed.
//!
//! The formats are specified in this crate's `FORMAT.md`; the golden tests
//! pin them to the reference tools' outputs.
//!
//! ```
//! use xsort_sortbench::{fill_records_checksum, validate_bytes, GenOptions, ValidateOptions};
//!
//! // `gensort -c 1000 f`, in memory.
//! let mut data = vec![0u8; 1000 * 100];
//! let sum = fill_records_checksum(&mut data, 0, GenOptions::default());
//! assert_eq!(format!("{sum:x}"), "1ea6370b955");
//! assert_eq!(&data[..10], b"JimGrayRIP");
//!
//! // `valsort f`: unsorted, so not in order, with the same checksum.
//! let summary = validate_bytes(&data, &ValidateOptions::default())?;
//! assert_eq!(summary.checksum, sum);
//! assert_eq!((summary.first_unordered, summary.unordered), (Some(2), 483));
//! assert_eq!(summary.exit_code(), 1);
//! # Ok::<(), xsort_sortbench::Error>(())
//! ```

pub mod checksum;
pub mod cli;
mod crc100;
pub mod error;
pub mod generate;
pub mod io;
pub mod lcg;
mod record;
pub mod summary;
pub mod validate;

pub use checksum::{checksum_of, format_checksum, record_crc};
pub use error::{Error, Result};
pub use generate::{
    fill_records, fill_records_checksum, generate_file, generate_record, generate_with, generated_checksum, GenOptions, GenerateJob,
};
pub use io::IoConfig;
pub use record::{KEY_SIZE, REC_SIZE};
pub use summary::{combine_summaries, parse_summaries, Summary, SUMMARY_SIZE};
pub use validate::{validate_bytes, validate_file, validate_summaries, validate_summary_file, KeyOrder, ValidateOptions};
