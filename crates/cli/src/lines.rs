//! The command line of a text-line sort (no `--record-size`): GNU sort's options read into the
//! core's [`GnuOrdering`], which checks them as GNU checks them (the library's `Sort::gnu_args`
//! fills the same one), and the options only the command has: `-c`, `--files0-from`, `-S`,
//! `--batch-size`, `--debug`. The settings every format shares are taken in [`crate::settings`].

use crate::args::Args;
use crate::exit::Failure;
use anyhow::{anyhow, bail, Context, Result};
use std::io::Read;
use std::path::{Path, PathBuf};
use xsort_core::order::KeyField;
use xsort_core::size::{parse_memory_size, MemorySize, SizeError};
use xsort_core::{CsvDialect, GnuOrdering, Locale, Order, Sort};

/// The locale lines order in: the environment's, as GNU's setlocale(LC_ALL, "") reads it, unless
/// `--locale-order=bytes`.
pub fn locale(args: &Args) -> Result<Locale> {
    if args.locale_order.as_deref() == Some("bytes") {
        return Ok(Locale::C);
    }
    Ok(Locale::from_env(|var| std::env::var_os(var).map(|v| v.to_string_lossy().into_owned()))?)
}

/// GNU sort's ordering options as given: the ordering letters, `--sort`, the keys (the obsolete
/// `+POS1 -POS2` ones in their place), `-t`, `-s`, `-u`, `-z`, `-m` and `--random-source`.
pub fn ordering(args: &Args) -> Result<GnuOrdering> {
    let mut o = GnuOrdering::default();
    let letters = [
        (args.ignore_leading_blanks, 'b'),
        (args.dictionary_order, 'd'),
        (args.ignore_case, 'f'),
        (args.general_numeric, 'g'),
        (args.human_numeric, 'h'),
        (args.ignore_nonprinting, 'i'),
        (args.month, 'M'),
        (args.numeric, 'n'),
        (args.random, 'R'),
        (args.reverse, 'r'),
        (args.version_sort, 'V'),
    ];
    o.letters = letters.iter().filter(|(on, _)| *on).map(|&(_, c)| c).collect();
    o.sort_words = args.sort_word.clone();
    o.keys = args.keys.iter().map(|k| parse_key(k)).collect::<Result<Vec<_>>>()?;
    o.separators = args.separator.clone();
    o.stable = args.stable;
    o.unique = args.unique;
    o.zero_terminated = args.zero_terminated;
    o.merge = args.merge;
    o.random_source = args.random_source.clone();
    Ok(o)
}

/// A `-k` KEYDEF, or an obsolete `+POS1 [-POS2]` key that main turned into `--key='+POS1 -POS2'`.
/// A `-k` value that merely starts with the marker (the user can type it) is an ordinary KEYDEF.
fn parse_key(k: &str) -> Result<KeyField> {
    let obsolete = k.strip_prefix(OBSOLETE_MARK).and_then(|rest| {
        let (start, end) = rest.split_once(' ').map_or((rest, None), |(s, e)| (s, Some(e)));
        let pos2 = match end {
            Some(e) => Some(e.strip_prefix('-')?),
            None => None,
        };
        Some((start, start.strip_prefix('+')?, pos2))
    });
    let parsed = match obsolete {
        Some((start, pos1, pos2)) => KeyField::parse_obsolete(pos1, pos2)
            .map(|k| k.ok_or_else(|| xsort_core::SortError::BadOption(format!("invalid key '{start}'")))),
        None => Ok(KeyField::parse_or_column(k)),
    };
    parsed.and_then(|r| r).map_err(|e| anyhow!("{e}"))
}

/// The CSV dialect and header of `--csv`, `--tsv`, `--csv-separator`, `--strict` and
/// `--header`, and `--jsonl`, applied to a sort of lines.
pub fn csv_and_header(sort: Sort, args: &Args) -> Result<Sort> {
    let separator = match args.csv_separator.as_deref() {
        None if args.tsv => Some(b'\t'),
        None if args.csv => Some(b','),
        None => None,
        Some("\\t" | "tab") => Some(b'\t'),
        Some(c) if c.len() == 1 => Some(c.as_bytes()[0]),
        Some(c) => bail!("--csv-separator takes one byte, not '{c}'"),
    };
    if args.jsonl && separator.is_some() {
        bail!("--jsonl reads JSON lines, not CSV records: give one of --jsonl and --csv");
    }
    let sort = if args.jsonl { sort.jsonl() } else { sort };
    let sort = match separator {
        Some(separator) => sort.csv(CsvDialect { separator, strict: args.strict }),
        None if args.strict => bail!("--strict applies to CSV records (--csv, --tsv)"),
        None => sort,
    };
    match args.header.as_deref() {
        None => Ok(sort),
        Some(n) => match n.parse::<usize>() {
            Ok(n) => Ok(sort.header(n)),
            Err(_) => bail!("invalid header count '{n}': give a number of records"),
        },
    }
}

/// Marks a key rewritten from the obsolete `+POS1 [-POS2]` form.
pub const OBSOLETE_MARK: &str = "\u{1}obsolete:";

/// Rewrites GNU's obsolete key operands (`+POS1 [-POS2]`, still accepted by GNU sort 9) into `--key`
/// options clap can parse, keeping their place among the other keys.
pub fn rewrite_obsolete_keys(argv: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out = Vec::with_capacity(argv.len());
    let mut it = argv.into_iter().peekable();
    if let Some(program) = it.next() {
        out.push(program);
    }
    let mut value_expected = false;
    while let Some(arg) = it.next() {
        if arg == "--" {
            out.push(arg);
            out.extend(it);
            break;
        }
        let is_value = std::mem::replace(&mut value_expected, takes_value(&arg));
        let Some(start) = arg.to_str().filter(|s| s.starts_with('+') && !is_value) else {
            out.push(arg);
            continue;
        };
        let end = it
            .peek()
            .and_then(|n| n.to_str())
            .filter(|n| n.len() > 1 && n.starts_with('-') && n.as_bytes()[1].is_ascii_digit())
            .map(str::to_owned);
        match KeyField::parse_obsolete(&start[1..], end.as_deref().map(|e| &e[1..])) {
            Ok(Some(_)) | Err(_) => {
                if end.is_some() {
                    it.next();
                }
                let joined = match &end {
                    Some(e) => format!("{start} {e}"),
                    None => start.to_owned(),
                };
                out.push(format!("--key={OBSOLETE_MARK}{joined}").into());
            }
            Ok(None) => out.push(arg),
        }
    }
    out
}

/// Whether `arg` is an option whose value is the next argument (`-k`, `-nk`, `--key`...).
fn takes_value(arg: &std::ffi::OsStr) -> bool {
    let Some(a) = arg.to_str() else { return false };
    const LONG: &[&str] = &[
        "--key",
        "--field-separator",
        "--output",
        "--buffer-size",
        "--memory",
        "--temporary-directory",
        "--parallel",
        "--batch-size",
        "--files0-from",
        "--random-source",
        "--sort",
        "--compress-program",
        "--record-size",
        "--key-bytes",
        "--spec",
        "--stats-json",
        "--transfer-size",
        "--method",
    ];
    match a.strip_prefix("--") {
        Some(_) => !a.contains('=') && LONG.iter().any(|l| l.starts_with(a) && a.len() > 3),
        None => {
            a.len() >= 2 && a.starts_with('-') && a[1..].bytes().all(|b| b.is_ascii_alphabetic()) && a.ends_with(['k', 't', 'o', 'S', 'T'])
        }
    }
}

/// `-S` as GNU sort takes it: 0 and percentages over 100 are accepted (and raised to the minimum or
/// clamped to the memory xsort may use).
pub fn memory_size(s: &str) -> Result<MemorySize> {
    match parse_memory_size(s) {
        Ok(m) => Ok(m),
        Err(SizeError::Zero(_)) => Ok(MemorySize::Bytes(1)),
        Err(SizeError::PercentOutOfRange(_)) if s.trim().trim_end_matches('%').parse::<f64>().is_ok_and(|p| p > 100.0) => {
            Ok(MemorySize::PercentOfRam(100.0))
        }
        Err(_) => bail!("invalid -S argument '{s}'"),
    }
}

/// `--batch-size`: at least 2, and at most what the open-file limit allows (as GNU checks it).
pub fn batch_size(s: &str) -> Result<usize> {
    let Ok(n) = s.parse::<u128>() else { bail!("invalid --batch-size argument '{s}'") };
    if n < 2 {
        bail!("invalid --batch-size argument '{s}'\n{}: minimum --batch-size argument is '2'", crate::exit::program());
    }
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct we pass.
    let max =
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 { (lim.rlim_cur as u128).saturating_sub(3) } else { u128::MAX };
    if n > max {
        bail!(
            "--batch-size argument '{s}' too large\n{}: maximum --batch-size argument with current rlimit is {max}",
            crate::exit::program()
        );
    }
    Ok(n as usize)
}

/// `-c`, `-C` or `--check[=WHEN]`: Some(quiet) when checking.
pub fn check_mode(args: &Args) -> Result<Option<bool>> {
    let long = match args.check.as_deref() {
        None => None,
        Some("diagnose-first") => Some(false),
        Some("quiet" | "silent") => Some(true),
        Some(w) => return Err(Failure::usage(format!("invalid argument '{w}' for '--check'")).into()),
    };
    let modes = [args.check_diagnose.then_some(false), args.check_quiet.then_some(true), long];
    let given: Vec<bool> = modes.into_iter().flatten().collect();
    if given.windows(2).any(|w| w[0] != w[1]) {
        bail!("options '-cC' are incompatible");
    }
    Ok(given.first().copied())
}

/// The operands, or the names in `--files0-from` (none: the caller reads standard input); `-` is
/// standard input.
pub fn operands(args: &Args) -> Result<Vec<PathBuf>> {
    let Some(list) = &args.files0_from else {
        return Ok(args.inputs.clone());
    };
    if let Some(first) = args.inputs.first() {
        bail!(
            "extra operand '{}'\nfile operands cannot be combined with --files0-from\nTry '{} --help' for more information.",
            first.display(),
            crate::exit::program()
        );
    }
    let text = if list.as_os_str() == "-" {
        xsort_io::stdio::stdin_input()?;
        let mut b = Vec::new();
        std::io::stdin().read_to_end(&mut b).context("-: read failed")?;
        b
    } else {
        std::fs::read(list).map_err(|e| anyhow!("open failed: {}: {}", list.display(), xsort_io::error::os_text(&e)))?
    };
    let names: Vec<&[u8]> = text.split(|&b| b == 0).collect();
    let names = if names.last().is_some_and(|n| n.is_empty()) { &names[..names.len() - 1] } else { &names[..] };
    if names.is_empty() {
        bail!("no input from '{}'", list.display());
    }
    let mut out = Vec::with_capacity(names.len());
    for (i, n) in names.iter().enumerate() {
        if n.is_empty() {
            bail!("{}:{}: invalid zero-length file name", list.display(), i + 1);
        }
        let p = Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(n));
        if list.as_os_str() == "-" && p.as_os_str() == "-" {
            bail!("when reading file names from stdin, no file name of '-' allowed");
        }
        out.push(p.to_owned());
    }
    Ok(out)
}

/// The first option given that only text lines take, if any (for a record sort's error).
pub fn line_only_option(args: &Args) -> Option<&'static str> {
    let used = [
        (!args.keys.is_empty(), "-k"),
        (!args.separator.is_empty(), "-t"),
        (args.zero_terminated, "-z"),
        (args.merge, "-m"),
        (args.check_diagnose || args.check_quiet || args.check.is_some(), "-c"),
        (args.debug, "--debug"),
        (args.files0_from.is_some(), "--files0-from"),
        (args.ignore_leading_blanks || args.dictionary_order || args.ignore_case, "-b/-d/-f"),
        (args.general_numeric || args.human_numeric || args.ignore_nonprinting || args.month, "-g/-h/-i/-M"),
        (args.numeric || args.random || args.reverse || args.version_sort || !args.sort_word.is_empty(), "-n/-R/-r/-V/--sort"),
        (args.random_source.is_some(), "--random-source"),
        (args.csv || args.tsv || args.csv_separator.is_some(), "--csv"),
        (args.jsonl, "--jsonl"),
        (args.header.is_some(), "--header"),
        (args.locale_order.is_some(), "--locale-order"),
    ];
    used.into_iter().find(|(on, _)| *on).map(|(_, name)| name)
}

/// `--debug`: sorts in memory (a diagnostic for small inputs, not the engine) and writes each line
/// with GNU's key annotations; `merge` keeps the inputs' order (`-m`), `unique` drops lines equal to
/// the one before (`-u`).
pub fn debug_sort(sort: &Sort, merge: bool, unique: bool) -> Result<()> {
    let Order::Lines(order, t) = sort.order()? else { bail!("--debug applies to text lines") };
    let mut data = Vec::new();
    for input in sort.input_names() {
        let start = data.len();
        if input.as_os_str() == "-" {
            xsort_io::stdio::stdin_input()?;
            std::io::stdin().read_to_end(&mut data).context("-: read failed")?;
        } else {
            data.extend(std::fs::read(input).map_err(|e| anyhow!("cannot read: {}: {}", input.display(), xsort_io::error::os_text(&e)))?);
        }
        if data.len() > start && data.last() != Some(&t) {
            data.push(t);
        }
    }
    let mut lines: Vec<&[u8]> = data.split(|&b| b == t).collect();
    lines.pop(); // after the last terminator
    if !merge {
        lines.sort_by(|a, b| order.compare(a, b));
    }
    let mut out = Vec::new();
    let mut last: Option<&[u8]> = None;
    for line in lines {
        if unique && last.is_some_and(|l| order.compare(l, line) == std::cmp::Ordering::Equal) {
            continue;
        }
        last = Some(line);
        order.debug_annotate(line, &mut out);
    }
    match sort.output_file() {
        Some(p) => std::fs::write(p, &out).with_context(|| format!("{}: write failed", p.display())),
        None => std::io::Write::write_all(&mut std::io::stdout(), &out).context("-: write failed"),
    }
}
