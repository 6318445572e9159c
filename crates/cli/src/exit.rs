//! Exit statuses, chosen in one place, as GNU sort chooses them.

use std::fmt;

/// Success.
pub const OK: u8 = 0;
/// `-c`/`-C` found disorder; also GNU's status for an invalid choice given to `--check` or `--sort`.
pub const DISORDER: u8 = 1;
/// Any trouble: bad options, bad input, I/O errors.
pub const TROUBLE: u8 = 2;

/// An error that ends xsort with a status other than [`TROUBLE`].
#[derive(Debug)]
pub struct Failure {
    /// The exit status.
    pub status: u8,
    /// What to print after "xsort: ".
    pub message: String,
}

impl Failure {
    /// GNU's usage failure for an invalid choice of a `--check` or `--sort` argument (status 1).
    pub fn usage(message: String) -> Self {
        Failure { status: DISORDER, message }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Failure {}

/// The status for an error: a [`Failure`]'s own, otherwise [`TROUBLE`].
pub fn status_of(e: &anyhow::Error) -> u8 {
    e.downcast_ref::<Failure>().map_or(TROUBLE, |f| f.status)
}
