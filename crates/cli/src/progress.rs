//! The progress bar: drawn on standard error from the sorter's live counters, only for sorts that
//! last more than a second.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use xsort_core::SortCounters;

/// A running progress display; dropping it (or [`Progress::finish`]) clears the bar.
pub struct Progress {
    stop: Option<Sender<()>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts the display thread.
    pub fn start(counters: Arc<SortCounters>) -> Self {
        let (stop, stopped) = bounded::<()>(0);
        let handle = std::thread::Builder::new().name("xsort-progress".into()).spawn(move || draw(&counters, &stopped)).ok();
        Progress { stop: Some(stop), handle }
    }

    /// Stops and clears the bar.
    pub fn finish(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.stop = None; // disconnects the channel: the thread wakes and exits
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop_now();
    }
}

fn draw(c: &SortCounters, stop: &Receiver<()>) {
    let started = Instant::now();
    let mut bar: Option<ProgressBar> = None;
    while stop.recv_timeout(Duration::from_millis(100)) == Err(RecvTimeoutError::Timeout) {
        if started.elapsed() < Duration::from_secs(1) {
            continue;
        }
        let input = c.input_total.load(Ordering::Relaxed);
        // Bytes moved: a one-pass sort reads and writes the data once; a spilled one twice.
        let passes = if c.spilled.load(Ordering::Relaxed) { 4 } else { 2 };
        let done = c.input.bytes() + c.temp_write.bytes() + c.temp_read.bytes() + c.output.bytes();
        let b = bar.get_or_insert_with(|| new_bar(input));
        if input > 0 {
            b.set_length(input * passes);
        }
        // The final merge writes the output while it reads runs: call that merging.
        let phase = if c.temp_read.bytes() > 0 {
            "merging"
        } else if c.output.bytes() > 0 {
            "writing"
        } else if c.temp_write.bytes() > 0 {
            "writing runs"
        } else {
            "reading"
        };
        b.set_message(phase);
        b.set_position(done);
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

fn new_bar(input: u64) -> ProgressBar {
    let b = if input > 0 { ProgressBar::new(input * 2) } else { ProgressBar::new_spinner() };
    b.set_draw_target(ProgressDrawTarget::stderr());
    let template = if input > 0 {
        "{msg:>12} [{bar:40}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}"
    } else {
        "{msg:>12} {spinner} {bytes} {bytes_per_sec}"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        b.set_style(style.progress_chars("=> "));
    }
    b
}
