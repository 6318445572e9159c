//! Progress on the terminal while the benchmark runs: a bar over the planned
//! runs (a spinner while a search does not know how many it needs), with
//! the current step as its message. Hidden when standard error is not a
//! terminal or with `--no-progress`; messages that must be seen (invalid
//! runs) are printed either way.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
    shown: bool,
}

impl Progress {
    /// A bar of `total` runs, or a spinner when `total` is `None`.
    pub fn new(enabled: bool, total: Option<u64>) -> Progress {
        let shown = enabled && std::io::stderr().is_terminal();
        let bar = match total {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        let template =
            if total.is_some() { "{elapsed_precise} [{bar:30}] run {pos}/{len} {msg}" } else { "{elapsed_precise} {spinner} {msg}" };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_draw_target(if shown { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() });
        if shown {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        Progress { bar, shown }
    }

    /// Sets the current step.
    pub fn step(&self, msg: String) {
        self.bar.set_message(msg);
    }

    /// One run done.
    pub fn run_done(&self) {
        self.bar.inc(1);
    }

    /// Prints a line above the bar (or plainly when there is no bar).
    pub fn println(&self, line: String) {
        if self.shown {
            self.bar.suspend(|| eprintln!("{line}"));
        } else {
            eprintln!("{line}");
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
