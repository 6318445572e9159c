//! Command-line errors as one line in GNU's words: `option '--s' is ambiguous; possibilities:
//! '--sort' '--stable' ...` for a prefix of several long options (clap, which accepts unambiguous
//! prefixes, only says "unexpected argument" there), `unrecognized option '--sortt'; did you mean
//! '--sort'?` for a typo (clap's suggestion, kept on the same line), `invalid option -- 'j'` for an
//! unknown short option, and clap's own first line otherwise.
//!
//! Before parsing, [`gnu_abbreviations`] gives GNU sort's abbreviations their GNU meaning where
//! xsort's own options would make them ambiguous (`--st` is `--stable` in GNU, while xsort also has
//! `--stats`). [`gnu_option_style`] writes the help's option values as GNU's help writes them.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;
use std::ffi::OsString;

/// GNU sort 9.1's long options, as its getopt table names them.
const GNU_LONG_OPTIONS: [&str; 30] = [
    "batch-size",
    "buffer-size",
    "check",
    "compress-program",
    "debug",
    "dictionary-order",
    "field-separator",
    "files0-from",
    "general-numeric-sort",
    "help",
    "human-numeric-sort",
    "ignore-case",
    "ignore-leading-blanks",
    "ignore-nonprinting",
    "key",
    "merge",
    "month-sort",
    "numeric-sort",
    "output",
    "parallel",
    "random-sort",
    "random-source",
    "reverse",
    "sort",
    "stable",
    "temporary-directory",
    "unique",
    "version",
    "version-sort",
    "zero-terminated",
];

/// `argv` with each long option that xsort's own options make ambiguous, but that abbreviates
/// exactly one of GNU sort's, spelt out as that GNU option (`--p=1`: `--parallel=1`; `--t DIR`:
/// `--temporary-directory DIR`), so that a command line GNU sort takes means the same to xsort.
/// Operands, option values and everything after `--` stay as they are.
pub fn gnu_abbreviations(argv: Vec<OsString>) -> Vec<OsString> {
    let cmd = crate::args::Args::command();
    let mut out = Vec::with_capacity(argv.len());
    let (mut value_next, mut options_end) = (false, false);
    for (i, word) in argv.into_iter().enumerate() {
        let text = word.to_str().map(str::to_owned);
        if i == 0 || value_next || options_end {
            value_next = false;
            out.push(word);
            continue;
        }
        let Some(text) = text else {
            out.push(word);
            continue;
        };
        if text == "--" {
            options_end = true;
        } else if let Some(long) = text.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            let full = spelt_out(name);
            value_next = value.is_none() && long_takes_value(&cmd, full.as_deref().unwrap_or(name));
            if let Some(full) = full {
                out.push(value.map_or(format!("--{full}"), |v| format!("--{full}={v}")).into());
                continue;
            }
        } else if let Some(shorts) = text.strip_prefix('-') {
            // A cluster of short options: a value follows when its last letter takes one.
            for (k, letter) in shorts.char_indices() {
                if short_takes_value(&cmd, letter) {
                    value_next = k + letter.len_utf8() == shorts.len();
                    break;
                }
            }
        }
        out.push(word);
    }
    out
}

/// The GNU option that `name` abbreviates, when xsort's options make it ambiguous and GNU's do not.
fn spelt_out(name: &str) -> Option<String> {
    let own = long_names_starting_with(name);
    if name.is_empty() || own.len() < 2 || own.iter().any(|n| n == name) {
        return None;
    }
    let mut gnu = GNU_LONG_OPTIONS.iter().filter(|g| g.starts_with(name));
    match (gnu.next(), gnu.next()) {
        (Some(only), None) if *only != name => Some(only.to_string()),
        _ => None,
    }
}

/// Whether the long option `name` (or the one it uniquely abbreviates) takes a value.
fn long_takes_value(cmd: &clap::Command, name: &str) -> bool {
    let mut matching = cmd
        .get_arguments()
        .filter(|a| a.get_long().into_iter().chain(a.get_all_aliases().unwrap_or_default()).any(|l| l == name || l.starts_with(name)));
    match (matching.next(), matching.next()) {
        (Some(arg), None) => arg.get_action().takes_values(),
        _ => false,
    }
}

/// Whether the short option `letter` takes a value.
fn short_takes_value(cmd: &clap::Command, letter: char) -> bool {
    cmd.get_arguments().any(|a| a.get_short() == Some(letter) && a.get_action().takes_values())
}

/// The message after `xsort: ` for a command line clap refused; `argv` is the command line it
/// parsed, for the word as typed (clap reports `--s=x` as `--s`; GNU quotes it whole).
pub fn message(err: &clap::Error, argv: &[std::ffi::OsString]) -> String {
    if err.kind() == ErrorKind::UnknownArgument {
        if let Some(ContextValue::String(arg)) = err.get(ContextKind::InvalidArg) {
            let with_value = format!("{arg}=");
            let typed = argv
                .iter()
                .skip(1)
                .filter_map(|w| w.to_str())
                .take_while(|w| *w != "--")
                .find(|w| arg.starts_with("--") && w.starts_with(&with_value))
                .unwrap_or(arg);
            if let Some(m) = unknown(typed, suggestion(err)) {
                return m;
            }
        }
    }
    let text = err.render().to_string();
    let first = text.lines().next().unwrap_or("invalid usage");
    first.trim_start_matches("error: ").to_string()
}

/// The message for an argument that names no option, or `None` when it is not an option at all.
fn unknown(arg: &str, suggestion: Option<String>) -> Option<String> {
    if let Some(long) = arg.strip_prefix("--") {
        let typed = long.split_once('=').map_or(long, |(name, _)| name);
        let names = long_names_starting_with(typed);
        if names.len() > 1 {
            let list: Vec<String> = names.iter().map(|n| format!("'--{n}'")).collect();
            return Some(format!("option '{arg}' is ambiguous; possibilities: {}", list.join(" ")));
        }
        return Some(match suggestion {
            Some(s) => format!("unrecognized option '{arg}'; did you mean '{s}'?"),
            None => format!("unrecognized option '{arg}'"),
        });
    }
    let letter = arg.strip_prefix('-').and_then(|rest| rest.chars().next())?;
    Some(format!("invalid option -- '{letter}'"))
}

/// Every long name (options and their aliases, hidden ones too, as GNU's getopt lists them) that
/// starts with `prefix`, in the order the options are declared.
fn long_names_starting_with(prefix: &str) -> Vec<String> {
    let cmd = crate::args::Args::command();
    let mut names = Vec::new();
    for arg in cmd.get_arguments() {
        let longs = arg.get_long().into_iter().chain(arg.get_all_aliases().unwrap_or_default());
        for name in longs {
            if name.starts_with(prefix) && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// clap's "a similar argument exists" suggestion, if it made one.
fn suggestion(err: &clap::Error) -> Option<String> {
    match err.get(ContextKind::SuggestedArg)? {
        ContextValue::String(s) => Some(s.clone()),
        ContextValue::Strings(v) => v.first().cloned(),
        _ => None,
    }
}

/// Clap's help with each option's value written as GNU's help writes it: `--output=FILE` for
/// `--output <FILE>`, `--check[=WHEN]` for `--check[=<WHEN>]`, descriptions kept in their column.
/// Scripts that read a help's options (GNU's usage_vs_getopt.sh) take the name before `=` or `[`.
pub fn gnu_option_style(help: &str) -> String {
    let mut out = String::with_capacity(help.len());
    for line in help.lines() {
        let indent = line.len() - line.trim_start().len();
        if line.trim_start().starts_with('-') {
            // The option column ends at the first gap of two spaces (or the line's end).
            let end = line[indent..].find("  ").map_or(line.len(), |i| indent + i);
            let column = line[..end].replace("[=<", "[=").replace(" <", "=").replace('>', "");
            let pad = end - column.len();
            out.push_str(format!("{column}{}{}", " ".repeat(pad), &line[end..]).trim_end());
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    if !help.ends_with('\n') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn option_values_are_written_as_gnu_writes_them() {
        let help = "Options:\n  -o, --output <FILE>  Write\n      --check[=<WHEN>]  Check\n      --stats           Print\n";
        let want = "Options:\n  -o, --output=FILE    Write\n      --check[=WHEN]    Check\n      --stats           Print\n";
        assert_eq!(gnu_option_style(help), want);
    }

    use super::*;
    use clap::Parser;

    fn refused(args: &[&str]) -> String {
        let argv: Vec<std::ffi::OsString> = std::iter::once("xsort").chain(args.iter().copied()).map(Into::into).collect();
        let err = crate::args::Args::try_parse_from(&argv).expect_err("refused");
        message(&err, &argv)
    }

    #[test]
    fn ambiguous_prefixes_list_every_candidate() {
        assert_eq!(refused(&["--stat"]), "option '--stat' is ambiguous; possibilities: '--stats' '--stats-json'");
        let m = refused(&["--s"]);
        for name in ["'--sort'", "'--stable'", "'--stats'", "'--stats-json'", "'--spec'", "'--sync'"] {
            assert!(m.contains(name), "{m}");
        }
        assert!(m.starts_with("option '--s' is ambiguous; possibilities: "), "{m}");
        // An alias counts as a name of its own, as in GNU's table.
        assert_eq!(refused(&["--buffer"]), "option '--buffer' is ambiguous; possibilities: '--buffer-size' '--buffered'");
    }

    #[test]
    fn typos_get_a_suggestion() {
        assert_eq!(refused(&["--sortt"]), "unrecognized option '--sortt'; did you mean '--sort'?");
        assert_eq!(refused(&["--recrod-size=100"]), "unrecognized option '--recrod-size=100'; did you mean '--record-size'?");
        assert_eq!(
            refused(&["--s=x"]),
            "option '--s=x' is ambiguous; possibilities: '--sort' '--strict' '--stable' '--spec' '--stats' '--stats-json' '--sync'"
        );
        assert_eq!(refused(&["--zzzz"]), "unrecognized option '--zzzz'");
        assert_eq!(refused(&["-j"]), "invalid option -- 'j'");
    }

    fn expanded(args: &[&str]) -> Vec<String> {
        let argv = std::iter::once("xsort").chain(args.iter().copied()).map(Into::into).collect();
        gnu_abbreviations(argv).into_iter().skip(1).map(|w| w.into_string().unwrap()).collect()
    }

    #[test]
    fn gnu_abbreviations_keep_their_gnu_meaning() {
        assert_eq!(
            expanded(&["--p=1", "--st", "--t", "dir", "--n", "--me", "--buffer=1M"]),
            ["--parallel=1", "--stable", "--temporary-directory", "dir", "--numeric-sort", "--merge", "--buffer-size=1M"]
        );
        // Values, operands and what follows `--` stay; exact names and xsort's own prefixes too.
        assert_eq!(
            expanded(&["-o", "--st", "-uo", "--me", "--stat", "--stats", "--compress=none", "--", "--n"]),
            ["-o", "--st", "-uo", "--me", "--stat", "--stats", "--compress=none", "--", "--n"]
        );
        assert_eq!(expanded(&["--output", "--n", "-ko", "--t"]), ["--output", "--n", "-ko", "--temporary-directory"]);
        let argv: Vec<OsString> = ["xsort", "--st", "--p=1", "in"].map(OsString::from).into();
        let a = crate::args::Args::try_parse_from(gnu_abbreviations(argv)).expect("parses");
        assert!(a.stable);
    }

    #[test]
    fn exact_names_and_unique_prefixes_still_parse() {
        let a = crate::args::Args::try_parse_from(["xsort", "--stats", "--stab", "--rec=8"]).expect("parses");
        assert!(a.stats && a.stable);
        assert_eq!(a.record_size, Some(8));
    }
}
