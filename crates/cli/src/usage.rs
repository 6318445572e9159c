//! Command-line errors as one line in GNU's words: `option '--s' is ambiguous; possibilities:
//! '--sort' '--stable' ...` for a prefix of several long options (clap, which accepts unambiguous
//! prefixes, only says "unexpected argument" there), `unrecognized option '--sortt'; did you mean
//! '--sort'?` for a typo (clap's suggestion, kept on the same line), `invalid option -- 'j'` for an
//! unknown short option, and clap's own first line otherwise.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::CommandFactory;

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

#[cfg(test)]
mod tests {
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
            "option '--s=x' is ambiguous; possibilities: '--sort' '--stable' '--spec' '--stats' '--stats-json' '--sync'"
        );
        assert_eq!(refused(&["--zzzz"]), "unrecognized option '--zzzz'");
        assert_eq!(refused(&["-j"]), "invalid option -- 'j'");
    }

    #[test]
    fn exact_names_and_unique_prefixes_still_parse() {
        let a = crate::args::Args::try_parse_from(["xsort", "--stats", "--stab", "--rec=8"]).expect("parses");
        assert!(a.stats && a.stable);
        assert_eq!(a.record_size, Some(8));
    }
}
