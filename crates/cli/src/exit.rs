//! Exit statuses, chosen in one place, as GNU sort chooses them; and the name messages start with.

use std::fmt;

/// The name xsort was run as: the base name of `argv[0]` (`xsort` when it has none). Messages start
/// with it, as GNU's tools' do, so that through a link named `sort` they say `sort: ...`.
pub fn program() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let argv0 = std::env::args_os().next().unwrap_or_default();
        let base = std::path::Path::new(&argv0).file_name().map(|n| n.to_string_lossy().into_owned());
        base.filter(|n| !n.is_empty()).unwrap_or_else(|| "xsort".into())
    })
}

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
    /// What to print after the program's name (see [`program`]).
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

/// The line printed after the program's name for an error: its chain of causes joined by ": ", with every
/// OS error worded as the C tools word it ("Permission denied", never "... (os error 13)"), and a
/// cause given once when the error before it already quotes it (errors such as rayon's whose text
/// includes their source).
pub fn message(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = without_os_error_numbers(&cause.to_string());
        if !parts.last().is_some_and(|p| p.ends_with(&text)) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

pub use xsort_io::error::without_os_error_numbers;

/// The status for an error: a [`Failure`]'s own; for the core's errors, by their kind (an invalid
/// choice of an option's value is GNU's usage failure); otherwise [`TROUBLE`].
pub fn status_of(e: &anyhow::Error) -> u8 {
    if let Some(f) = e.downcast_ref::<Failure>() {
        return f.status;
    }
    match e.downcast_ref::<xsort_core::SortError>() {
        Some(xsort_core::SortError::InvalidArgument { .. }) => DISORDER,
        _ => TROUBLE,
    }
}

/// Whether an error is a write to standard output that found it closed (`xsort ... | head`).
pub fn is_closed_stdout(e: &anyhow::Error) -> bool {
    let io = e.downcast_ref::<xsort_io::IoError>().or_else(|| match e.downcast_ref::<xsort_core::SortError>() {
        Some(xsort_core::SortError::Io(io)) => Some(io),
        _ => None,
    });
    matches!(io, Some(xsort_io::IoError::Write { path, cause }) if path.as_os_str() == "-" && cause.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Ends the process as GNU sort ends when its reader goes away: killed by SIGPIPE, silently.
pub fn die_of_sigpipe() {
    // SAFETY: restoring the default action of SIGPIPE and raising it in this process; nothing is
    // left to clean up (standard output has no temp file, and temp runs are already unlinked).
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_error_numbers_go_and_a_quoted_cause_is_given_once() {
        assert_eq!(without_os_error_numbers("a: Permission denied (os error 13)"), "a: Permission denied");
        assert_eq!(without_os_error_numbers("x (os error 2): y (os error 11)"), "x: y");
        assert_eq!(without_os_error_numbers("odd (os error x) (os error )"), "odd (os error x) (os error )");
        // Like rayon's ThreadPoolBuildError: its text is its source's text.
        #[derive(Debug)]
        struct Quoting(std::io::Error);
        impl fmt::Display for Quoting {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
        impl std::error::Error for Quoting {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let e = anyhow::Error::new(Quoting(std::io::Error::from_raw_os_error(libc::EAGAIN))).context("cannot start worker threads");
        assert_eq!(
            format!("{e:#}"),
            "cannot start worker threads: Resource temporarily unavailable (os error 11): Resource temporarily unavailable (os error 11)"
        );
        assert_eq!(message(&e), "cannot start worker threads: Resource temporarily unavailable");
        let e = anyhow::Error::new(std::io::Error::from_raw_os_error(libc::EACCES)).context("f: cannot write statistics");
        assert_eq!(message(&e), "f: cannot write statistics: Permission denied");
    }
}
