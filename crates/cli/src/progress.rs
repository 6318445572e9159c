//! Progress on standard error, from the sorter's live counters.
//!
//! On a terminal: one line redrawn in place every 200 ms, from the first second on (a quick sort
//! shows nothing), cleared at the end. Anywhere else (`--progress` into a file or a pipe): one line
//! per second, as `dd status=progress` and `pv -n` do, and a last line when the sort is done.
//!
//! Every frame names its phase and measures the phase against its own total, the work the plan
//! gives it: reading a 954 MiB input is "/954.0 MiB", and so is writing its output or merging its
//! runs; phases are not summed into one bar that would run past the data's size. A phase's rate
//! is its bytes moved since the phase was first seen over the time since, shown only once it has
//! moved bytes in that time: a counter that jumps as a phase begins (a mapped input is counted
//! whole at once) gives no rate rather than an absurd one.

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender};
use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use xsort_core::SortCounters;

/// A running progress display; [`Progress::finish`] (or dropping it) ends it.
pub struct Progress {
    stop: Option<Sender<bool>>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts the display thread: a bar redrawn in place when standard error is a terminal, a line
    /// per second otherwise.
    pub fn start(counters: Arc<SortCounters>) -> Self {
        let (stop, stopped) = bounded::<bool>(1);
        let style = if std::io::stderr().is_terminal() { Style::Terminal } else { Style::Lines };
        let handle = std::thread::Builder::new().name("xsort-progress".into()).spawn(move || show(&counters, &stopped, style)).ok();
        Progress { stop: Some(stop), handle }
    }

    /// Ends the display: the bar is cleared; in line mode a last line says the sort is done when it
    /// `succeeded` (a failure's message follows instead).
    pub fn finish(mut self, succeeded: bool) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(succeeded);
        }
        self.join();
    }

    fn join(&mut self) {
        self.stop = None; // disconnects the channel: the thread wakes and exits
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.join();
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Style {
    Terminal,
    Lines,
}

/// The counters at one moment.
#[derive(Clone, Copy, Debug, Default)]
struct Snapshot {
    /// The input's size when known in advance (regular files), else 0.
    input_total: u64,
    input: u64,
    temp_write: u64,
    temp_read: u64,
    output: u64,
    spilled: bool,
    final_merge: bool,
}

impl Snapshot {
    fn of(c: &SortCounters) -> Snapshot {
        Snapshot {
            input_total: c.input_total.load(Ordering::Relaxed),
            input: c.input.bytes(),
            temp_write: c.temp_write.bytes(),
            temp_read: c.temp_read.bytes(),
            output: c.output.bytes(),
            spilled: c.spilled.load(Ordering::Relaxed),
            final_merge: c.final_merge.load(Ordering::Relaxed),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    /// Reading the input (one pass: it all fits).
    Reading,
    /// Reading the input and writing it back as sorted runs (the sort spills).
    FormingRuns,
    /// All read, nothing written yet: the in-memory sort.
    Sorting,
    /// Writing the output of a one-pass sort.
    Writing,
    /// Merging runs into longer runs (more runs than one merge takes at once).
    MergingRuns,
    /// The final merge, into the output.
    Merging,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Reading => "reading",
            Phase::FormingRuns => "forming runs",
            Phase::Sorting => "sorting",
            Phase::Writing => "writing",
            Phase::MergingRuns => "merging runs",
            Phase::Merging => "merging",
        }
    }
}

/// What one frame shows.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Frame {
    phase: Phase,
    /// Bytes of this phase done, and its total when known.
    done: u64,
    total: Option<u64>,
    /// Bytes per second of this phase, once it has moved bytes.
    rate: Option<f64>,
}

/// Follows the phases: when each began and where its count stood then.
#[derive(Default)]
struct Tracker {
    current: Option<(Phase, f64, u64)>,
}

impl Tracker {
    /// The frame for counters `s` seen `t` seconds after the start.
    fn frame(&mut self, s: &Snapshot, t: f64) -> Frame {
        let known = (s.input_total > 0).then_some(s.input_total);
        // Without a known size (standard input, pipes), the input is complete once anything is
        // read back or written; its size is then the total of the later phases.
        let input_done = s.final_merge || known.map_or(s.output > 0 || s.temp_read > 0, |total| s.input >= total);
        let data = known.or((s.input > 0).then_some(s.input));
        let (phase, done, total) = if s.final_merge {
            // The merge into the output (after forming runs, or of -m's sorted inputs).
            (Phase::Merging, s.output, data)
        } else if !input_done {
            (if s.spilled { Phase::FormingRuns } else { Phase::Reading }, s.input, known)
        } else if s.spilled && s.temp_read == 0 {
            (Phase::FormingRuns, s.input, data)
        } else if s.spilled {
            // Intermediate merge levels read runs and write longer ones; their total grows as
            // they write, as far as the runs written so far.
            (Phase::MergingRuns, s.temp_read, Some(s.temp_write))
        } else if s.output == 0 {
            // Sorting moves no bytes: the frame says how much is being sorted, with no percentage.
            (Phase::Sorting, s.input, None)
        } else {
            (Phase::Writing, s.output, data)
        };
        let (began, base) = match self.current {
            Some((p, began, base)) if p == phase => (began, base),
            _ => {
                self.current = Some((phase, t, done));
                (t, done)
            }
        };
        let moved = done.saturating_sub(base);
        let rate = (moved > 0 && t - began >= 0.2).then(|| moved as f64 / (t - began));
        Frame { phase, done, total, rate }
    }
}

/// The frame as text: phase, the bar (if any), done/total, percentage, rate and time left.
fn render(f: &Frame, bar: bool) -> String {
    let mut line = format!("xsort: {:<12}", f.phase.name());
    match f.total.filter(|&t| t > 0) {
        Some(total) => {
            let frac = (f.done as f64 / total as f64).clamp(0.0, 1.0);
            if bar {
                const WIDTH: usize = 24;
                let full = (frac * WIDTH as f64) as usize;
                let head = if full < WIDTH { ">" } else { "" };
                line.push_str(&format!(" [{}{head}{}]", "=".repeat(full), " ".repeat(WIDTH - full - head.len())));
            }
            line.push_str(&format!(" {}/{} {:>3}%", bytes(f.done), bytes(total), (frac * 100.0) as u32));
            if let Some(rate) = f.rate {
                line.push_str(&format!(" {}/s", bytes(rate as u64)));
                let left = total.saturating_sub(f.done) as f64 / rate;
                if left.is_finite() && f.done < total {
                    line.push_str(&format!(" eta {}", duration(left)));
                }
            }
        }
        None => {
            line.push_str(&format!(" {}", bytes(f.done)));
            if let Some(rate) = f.rate {
                line.push_str(&format!(" {}/s", bytes(rate as u64)));
            }
        }
    }
    line
}

/// Bytes in binary units, one decimal: `954.0 MiB`.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// Seconds as `42s`, `3m05s` or `2h10m`.
fn duration(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// The display loop: samples every 100 ms, draws at the style's pace, until told to stop.
fn show(c: &SortCounters, stop: &Receiver<bool>, style: Style) {
    let started = Instant::now();
    let (first, every) = match style {
        Style::Terminal => (Duration::from_secs(1), Duration::from_millis(200)),
        Style::Lines => (Duration::from_secs(1), Duration::from_secs(1)),
    };
    let mut tracker = Tracker::default();
    let mut next = first;
    let mut drawn = false;
    let succeeded = loop {
        match stop.recv_timeout(Duration::from_millis(100)) {
            Ok(ok) => break ok,
            Err(RecvTimeoutError::Disconnected) => break false,
            Err(RecvTimeoutError::Timeout) => {}
        }
        let t = started.elapsed();
        let frame = tracker.frame(&Snapshot::of(c), t.as_secs_f64());
        if t < next {
            continue;
        }
        next = t + every;
        let mut err = std::io::stderr().lock();
        let _ = match style {
            Style::Terminal => write!(err, "\r{}\x1b[K", render(&frame, true)),
            Style::Lines => writeln!(err, "{}", render(&frame, false)),
        };
        drawn = true;
    };
    let mut err = std::io::stderr().lock();
    match style {
        Style::Terminal if drawn => {
            let _ = write!(err, "\r\x1b[K");
        }
        Style::Lines if succeeded => {
            let s = Snapshot::of(c);
            let _ = writeln!(err, "xsort: done         {} in {:.1} s", bytes(s.input.max(s.output)), started.elapsed().as_secs_f64());
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn snap(input_total: u64, input: u64, temp_write: u64, temp_read: u64, output: u64, spilled: bool) -> Snapshot {
        Snapshot { input_total, input, temp_write, temp_read, output, spilled, final_merge: false }
    }

    fn last(s: Snapshot) -> Snapshot {
        Snapshot { final_merge: true, ..s }
    }

    #[test]
    fn one_pass_phases_each_measure_the_input_size() {
        let mut t = Tracker::default();
        let total = 954 * MIB;
        let f = t.frame(&snap(total, 100 * MIB, 0, 0, 0, false), 0.1);
        assert_eq!((f.phase, f.done, f.total, f.rate), (Phase::Reading, 100 * MIB, Some(total), None));
        let f = t.frame(&snap(total, 300 * MIB, 0, 0, 0, false), 0.6);
        assert_eq!(f.phase, Phase::Reading);
        assert_eq!(f.rate, Some(400.0 * MIB as f64), "200 MiB in 0.5 s");
        let f = t.frame(&snap(total, total, 0, 0, 0, false), 1.0);
        assert_eq!((f.phase, f.total, f.rate), (Phase::Sorting, None, None));
        assert_eq!(render(&f, true), "xsort: sorting      954.0 MiB");
        let f = t.frame(&snap(total, total, 0, 0, 8 * MIB, false), 1.5);
        assert_eq!((f.phase, f.done, f.total, f.rate), (Phase::Writing, 8 * MIB, Some(total), None));
        let f = t.frame(&snap(total, total, 0, 0, 208 * MIB, false), 2.0);
        assert_eq!(f.rate, Some(400.0 * MIB as f64));
        let line = render(&f, false);
        assert_eq!(line, "xsort: writing      208.0 MiB/954.0 MiB  21% 400.0 MiB/s eta 2s");
    }

    #[test]
    fn a_counter_that_jumps_as_its_phase_begins_gives_no_rate() {
        // A mapped input is counted whole at once: the first frames show no rate at all.
        let mut t = Tracker::default();
        let total = 954 * MIB;
        for at in [0.1, 0.2, 0.5, 0.9] {
            let f = t.frame(&snap(total, total, 0, 0, 0, false), at);
            assert_eq!((f.phase, f.rate), (Phase::Sorting, None));
            assert!(!render(&f, true).contains("/s"), "{}", render(&f, true));
        }
        // Writing begins with a block already counted, then moves.
        let f = t.frame(&snap(total, total, 0, 0, 8 * MIB, false), 1.0);
        assert_eq!(f.rate, None);
        let f = t.frame(&snap(total, total, 0, 0, 9 * MIB, false), 1.1);
        assert_eq!(f.rate, None, "0.1 s is too short to call a rate");
        let f = t.frame(&snap(total, total, 0, 0, 16 * MIB, false), 2.0);
        assert_eq!(f.rate, Some(8.0 * MIB as f64));
    }

    #[test]
    fn spilled_phases_form_runs_then_merge_against_the_data_size() {
        let mut t = Tracker::default();
        let total = 1000 * MIB;
        let f = t.frame(&snap(total, 250 * MIB, 125 * MIB, 0, 0, true), 1.0);
        assert_eq!((f.phase, f.done, f.total), (Phase::FormingRuns, 250 * MIB, Some(total)));
        let f = t.frame(&snap(total, total, 900 * MIB, 0, 0, true), 3.0);
        assert_eq!((f.phase, f.done), (Phase::FormingRuns, total));
        let f = t.frame(&snap(total, total, total, 100 * MIB, 0, true), 4.0);
        assert_eq!((f.phase, f.done, f.total), (Phase::MergingRuns, 100 * MIB, Some(total)));
        let f = t.frame(&last(snap(total, total, 2 * total, 2 * total, 0, true)), 6.0);
        assert_eq!((f.phase, f.done, f.total, f.rate), (Phase::Merging, 0, Some(total), None));
        let f = t.frame(&last(snap(total, total, 2 * total, 2 * total, 10 * MIB, true)), 7.0);
        assert_eq!((f.phase, f.done, f.total, f.rate), (Phase::Merging, 10 * MIB, Some(total), Some(10.0 * MIB as f64)));
        assert!(render(&f, true).contains("10.0 MiB/1000.0 MiB"), "{}", render(&f, true));
    }

    #[test]
    fn merging_sorted_inputs_measures_the_output() {
        // -m: the inputs are read as runs, the input counter stays still.
        let mut t = Tracker::default();
        let f = t.frame(&last(snap(64 * MIB, 0, 0, 4 * MIB, 2 * MIB, false)), 1.0);
        assert_eq!((f.phase, f.done, f.total), (Phase::Merging, 2 * MIB, Some(64 * MIB)));
    }

    #[test]
    fn unknown_input_size_shows_bytes_then_the_read_size() {
        let mut t = Tracker::default();
        let f = t.frame(&snap(0, 5 * MIB, 0, 0, 0, false), 1.0);
        assert_eq!((f.phase, f.total), (Phase::Reading, None));
        assert_eq!(render(&f, false), "xsort: reading      5.0 MiB");
        let f = t.frame(&snap(0, 6 * MIB, 0, 0, MIB, false), 2.0);
        assert_eq!((f.phase, f.done, f.total), (Phase::Writing, MIB, Some(6 * MIB)));
    }

    #[test]
    fn bars_and_units() {
        let f = Frame { phase: Phase::Merging, done: 512, total: Some(1024), rate: None };
        assert_eq!(render(&f, true), "xsort: merging      [============>           ] 512 B/1.0 KiB  50%");
        let f = Frame { phase: Phase::Writing, done: 1024, total: Some(1024), rate: Some(2048.0) };
        assert_eq!(render(&f, true), "xsort: writing      [========================] 1.0 KiB/1.0 KiB 100% 2.0 KiB/s");
        assert_eq!(duration(3725.0), "1h02m");
        assert_eq!(duration(65.0), "1m05s");
    }
}
