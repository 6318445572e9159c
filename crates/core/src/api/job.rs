//! The engine's job: a [`Sort`] checked and turned into the engine's configuration. Every check
//! of a sort's settings is made here (or, for the in-memory sorts, by the same functions), before
//! anything is opened.

use super::{check_record_size, Format, Sort, INPUT_IO, OUTPUT_IO, TEMP_IO};
use crate::config::{self, Input, IoSettings, LineFormat, Output, RecordFormat, SortConfig};
use crate::error::{Result, SortError};
use crate::key::KeySpec;
use crate::order::LineOrder;
use crate::select::reader::{InputTransform, SelectFraming};
use crate::stats::{SortCounters, SortStats};
use crate::text::TextMode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

impl Sort {
    /// The engine's job, checked: every check of a sort's settings is made here (or, for the
    /// in-memory sorts, by the same functions), before anything is opened.
    pub(super) fn job(self) -> Result<Job> {
        self.check_refused()?;
        let crate::plan::Budget { bytes: budget, basis: budget_basis, .. } = self.budget();
        let threads = crate::limits::worker_threads(self.threads);
        let temp_dirs = if self.temp_dirs.is_empty() { vec![std::env::temp_dir()] } else { self.temp_dirs };
        let io = |i: usize| IoSettings::of_statement(self.io[i].as_ref(), self.transfer_size, self.buffered, budget);
        let output = self.output.unwrap_or(Output::Stdout);
        let match_mark = self.match_mark;
        let check_match = |keys: usize| match match_mark.and_then(|m| m.keys) {
            Some(n) if n == 0 || n > keys.max(1) => Err(SortError::BadOption(match keys {
                0 => format!("-match={n}: the sort has one key, the whole record (no -key is given)"),
                1 => format!("-match={n}: the sort has 1 key"),
                _ => format!("-match={n}: the sort has {keys} keys"),
            })),
            _ => Ok(()),
        };
        let select = (self.selection.is_some() || self.reformat.is_some()).then(|| {
            let input_size = self.reformat.as_ref().and_then(|(_, size)| *size);
            let framing = match &self.format {
                Format::Records { record_size, .. } => SelectFraming::Fixed(input_size.unwrap_or(*record_size)),
                Format::Lines { terminator, .. } => SelectFraming::Terminated(*terminator),
            };
            InputTransform::new(self.derivation, self.selection, self.reformat.map(|(r, _)| r), framing)
        });
        let format = match self.format {
            Format::Records { record_size, key, mut folding, touch, merge } => {
                check_record_size(record_size)?;
                check_match(key.len())?;
                folding.mark = match_mark;
                // Checked now, so that a session refuses them before any input is pushed.
                let key = KeySpec::new(key);
                key.resolve(record_size)?;
                folding.check(record_size)?;
                crate::plan::check_budget(budget, record_size)?;
                let mut rec = RecordFormat::new(record_size);
                rec.key = key;
                rec.input_io = io(INPUT_IO);
                rec.touch = touch;
                rec.folding = folding;
                rec.merge = merge;
                config::Format::Records(rec)
            }
            Format::Lines { terminator, order, merge, header } => {
                // A key that names a column needs a header to name it; without one, its argument
                // is refused as GNU refuses a KEYDEF.
                if let Some(e) = order.keys.iter().find_map(|k| k.keydef_error()).filter(|_| header == 0 && !order.jsonl) {
                    // GNU's words for a plain sort; CSV records get the way to name a column.
                    return Err(match (&e, order.csv, order.keys.iter().find_map(|k| k.column_name())) {
                        (SortError::BadOption(why), Some(_), Some(name)) => {
                            SortError::BadOption(format!("key '{name}' names a column, which needs --header (as a KEYDEF: {why})"))
                        }
                        _ => e,
                    });
                }
                check_match(order.keys.len())?;
                let unique = order.unique;
                let mode = if merge { TextMode::Merge } else { TextMode::Sort };
                config::Format::Lines(LineFormat { terminator, order: LineOrder::new(order)?, unique, mode, header, mark: match_mark })
            }
        };
        let mut cfg = SortConfig::new(self.inputs, output, format, budget);
        cfg.memory_budget_basis = budget_basis;
        cfg.threads = threads;
        cfg.temp_dirs = temp_dirs;
        cfg.method = self.method;
        cfg.output_io = io(OUTPUT_IO);
        cfg.temp_io = io(TEMP_IO);
        cfg.sync = self.sync;
        if let (Some(program), crate::config::TempCompression::Zstd(_)) = (&self.compress_program, self.temp_compression) {
            return Err(SortError::BadOption(format!(
                "temp runs cannot be compressed both by zstd (--compress-temp) and by the compress program '{program}': give one"
            )));
        }
        if let crate::config::TempCompression::Zstd(level) = self.temp_compression {
            crate::config::TempCompression::zstd(level).map_err(|e| SortError::BadOption(format!("temp compression: {e}")))?;
        }
        cfg.compress_program = self.compress_program;
        cfg.temp_compression = self.temp_compression;
        cfg.decompress = self.decompress;
        cfg.output_compression = self.output_compression;
        cfg.max_fan_in = self.max_fan_in;
        cfg.expected_input_bytes = self.expected_input_bytes;
        cfg.cancel = Some(self.cancel.unwrap_or_default());
        cfg.no_warnings = self.no_warnings;
        if self.append && !matches!(cfg.output, Output::Path(_)) {
            return Err(SortError::BadOption("append: only an output file can be appended to, not standard output or a writer".into()));
        }
        cfg.output_append = self.append;
        match &cfg.output {
            _ if self.output_copies.is_empty() => {}
            Output::Path(main) => {
                let mut paths: Vec<&std::path::Path> = vec![main];
                for c in &self.output_copies {
                    if paths.contains(&c.path.as_path()) {
                        return Err(SortError::BadOption(format!("'{}' is already an output file", c.path.display())));
                    }
                    paths.push(&c.path);
                }
            }
            _ => {
                return Err(SortError::BadOption(
                    "further output files are copies of an output file: standard output or a writer cannot have them".into(),
                ))
            }
        }
        cfg.output_copies = self.output_copies;
        cfg.select = select;
        cfg.merge_check = self.merge_check;
        Ok(Job(crate::engine::Engine::new(cfg, self.counters.unwrap_or_default())))
    }
}

/// A sort ready to run on the engine.
pub(crate) struct Job(pub(super) crate::engine::Engine);

impl Job {
    pub(super) fn run(&self) -> Result<SortStats> {
        self.0.run()
    }

    pub(super) fn counters(&self) -> Arc<SortCounters> {
        self.0.counters()
    }

    pub(super) fn record_size(&self) -> Option<usize> {
        match &self.0.config().format {
            // As the output holds them: with the byte of -match.
            config::Format::Records(rec) => Some(rec.record_size + usize::from(rec.folding.mark.is_some())),
            config::Format::Lines(_) => None,
        }
    }

    pub(super) fn set_input(&mut self, input: Input) {
        self.0.config_mut().inputs = vec![input];
    }

    pub(super) fn set_output(&mut self, output: Output) {
        self.0.config_mut().output = output;
    }

    /// The sort's cancel flag (every job has one: see [`Sort::job`]).
    pub(super) fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.0.config().cancel.clone().unwrap_or_default()
    }
}
