//! Manual pages and shell completions for `xsort-bench`, `gensort` and `valsort`, written by the
//! hidden flags `xsort-bench --generate-man DIR` and `--generate-completions DIR`
//! (`scripts/install.sh` calls them).
//!
//! `gensort` and `valsort` keep the reference tools' command line exactly (any option they do not
//! know prints the usage text), so they cannot take flags of their own for this, and they do not
//! parse with clap. Their pages are built from their usage text instead: each option paragraph of
//! `USAGE` becomes an option of a clap `Command` used only for the page and the completions. The
//! tests hold that `Command` to the tools' real parsers, letter by letter.

use std::path::Path;

use anyhow::{Context, Result};
use clap::{Arg, ArgAction, Command, CommandFactory};
use clap_complete::Shell;

/// Every command this crate documents, built for rendering.
fn commands() -> Vec<Command> {
    vec![
        crate::cli::Args::command(),
        usage_command("gensort", xsort_sortbench::cli::gensort::USAGE),
        usage_command("valsort", xsort_sortbench::cli::valsort::USAGE),
    ]
}

/// Writes `xsort-bench.1`, `gensort.1` and `valsort.1` into `dir`.
pub fn write_man(dir: &Path) -> Result<()> {
    for cmd in commands() {
        let path = dir.join(format!("{}.1", cmd.get_name()));
        let page = xsort_manpage::man_page(cmd)?;
        std::fs::write(&path, page).with_context(|| format!("{}: cannot write the manual page", path.display()))?;
    }
    Ok(())
}

/// Writes bash, zsh and fish completions of the three commands into `dir` (clap_complete's names:
/// `NAME.bash`, `_NAME`, `NAME.fish`).
pub fn write_completions(dir: &Path) -> Result<()> {
    for mut cmd in commands() {
        let name = cmd.get_name().to_string();
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            clap_complete::generate_to(shell, &mut cmd, name.clone(), dir)
                .with_context(|| format!("{}: cannot write the {shell} completions of {name}", dir.display()))?;
        }
    }
    Ok(())
}

/// A clap `Command` describing a reference tool from its usage text: the first line is the about,
/// `usage: ...` the synopsis, each line starting with `-X` an option (its value name glued to the
/// letter, as in `-tN`, or after a space, as in `-o SUMMARY_FILE`), each line starting with an upper
/// case word an operand, indented lines the rest of the paragraph above, and everything from the
/// first `Example` line on the closing text.
pub fn usage_command(name: &'static str, usage: &'static str) -> Command {
    let mut lines = usage.lines();
    let about = lines.next().unwrap_or(name);
    let mut cmd = Command::new(name).about(about).disable_help_flag(true).disable_version_flag(true);
    // (head, the rest of its first line, the lines that continue it)
    let mut items: Vec<(&'static str, &'static str, String)> = Vec::new();
    let mut rest = usage;
    for line in lines {
        if let Some(synopsis) = line.strip_prefix("usage: ") {
            cmd = cmd.override_usage(synopsis);
        } else if line.starts_with("Example") {
            rest = &usage[usage.find(line).unwrap_or(0)..];
            break;
        } else if line.starts_with(|c: char| c == '-' || c.is_ascii_uppercase()) {
            let (head, text) = line.split_once(' ').unwrap_or((line, ""));
            items.push((head, text, String::new()));
        } else if let (Some(item), false) = (items.last_mut(), line.trim().is_empty()) {
            item.2.push(' ');
            item.2.push_str(line.trim());
        }
    }
    for (head, first, more) in items {
        cmd = cmd.arg(usage_arg(head, first, more));
    }
    cmd.after_help(rest.trim_end())
}

/// One item of a usage text as a clap argument: its head (`-a`, `-tN`, `NUM_RECS`), the rest of
/// its first line (after the one space that ends the head) and the lines that continue it, the
/// help's spacing made single (the usage text aligns columns with runs of spaces).
fn usage_arg(head: &'static str, first: &'static str, more: String) -> Arg {
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(option) = head.strip_prefix('-') {
        let letter = option.chars().next().unwrap_or('-');
        // `-o SUMMARY_FILE  text`: a value name one space after the letter (a flag's text is
        // aligned further right).
        let (value, help) = match &option[1..] {
            "" if first.starts_with(|c: char| c != ' ') => {
                let (value, help) = first.split_once(' ').unwrap_or((first, ""));
                (Some(value), words(&format!("{help}{more}")))
            }
            "" => (None, words(&format!("{first}{more}"))),
            glued => (Some(glued), words(&format!("{first}{more}"))),
        };
        let arg = Arg::new(option).short(letter).help(help);
        match value {
            Some(v) => arg.value_name(v).action(ArgAction::Set),
            None => arg.action(ArgAction::SetTrue),
        }
    } else {
        Arg::new(head).value_name(head).help(words(&format!("{first}{more}"))).action(ArgAction::Set).required(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use xsort_manpage::man_page;
    use xsort_sortbench::cli::{gensort, valsort};

    /// The letters a page documents, with whether each takes a value.
    fn documented(cmd: &Command) -> Vec<(char, bool)> {
        let mut v: Vec<_> = cmd.get_arguments().filter_map(|a| a.get_short().map(|c| (c, a.get_action().takes_values()))).collect();
        v.sort();
        v
    }

    /// The letters a tool's parser accepts in front of `operands`, with whether each takes a value:
    /// one whose result changes when a number is glued to it (`-t7`), or that is refused alone but
    /// accepted with the next word as its value (`-o NAME`). The reference reads only the letter
    /// after a dash, so a flag ignores what is glued to it (`-a7` is `-a`).
    fn accepted<T: PartialEq, E>(parse: impl Fn(Vec<OsString>) -> Result<T, E>, operands: &[&str]) -> Vec<(char, bool)> {
        let line = |head: &[&str]| head.iter().chain(operands).map(OsString::from).collect::<Vec<_>>();
        let mut v = Vec::new();
        for c in ('a'..='z').chain('A'..='Z') {
            let (flag, glued) = (format!("-{c}"), format!("-{c}7"));
            match parse(line(&[&flag])) {
                Ok(plain) => v.push((c, parse(line(&[&glued])).ok() != Some(plain))),
                Err(_) if parse(line(&[&flag, "name"])).is_ok() => v.push((c, true)),
                Err(_) => {}
            }
        }
        v.sort();
        v
    }

    #[test]
    fn gensort_page_matches_its_parser() {
        let cmd = usage_command("gensort", gensort::USAGE);
        assert_eq!(documented(&cmd), accepted(gensort::parse, &["10", "f"]));
        assert_eq!(documented(&cmd), vec![('a', false), ('b', true), ('c', false), ('s', false), ('t', true)]);
        let operands: Vec<_> = cmd.get_positionals().map(|a| a.get_id().to_string()).collect();
        assert_eq!(operands, ["NUM_RECS", "FILE_NAME[,opts]"]);
    }

    #[test]
    fn valsort_page_matches_its_parser() {
        let cmd = usage_command("valsort", valsort::USAGE);
        assert_eq!(documented(&cmd), accepted(valsort::parse, &["f"]));
        assert_eq!(documented(&cmd), vec![('i', false), ('o', true), ('q', false), ('s', false), ('t', true)]);
        let operands: Vec<_> = cmd.get_positionals().map(|a| a.get_id().to_string()).collect();
        assert_eq!(operands, ["FILE_NAME[,opts]"]);
    }

    #[test]
    fn pages_carry_every_usage_paragraph() {
        for (name, usage) in [("gensort", gensort::USAGE), ("valsort", valsort::USAGE)] {
            let page = String::from_utf8(man_page(usage_command(name, usage)).expect("page")).expect("utf-8");
            // Every word of the usage text is on the page (roff escapes dashes and backslashes).
            for word in usage.split_whitespace().filter(|w| w.chars().all(|c| c.is_ascii_alphanumeric())) {
                assert!(page.contains(word), "{name}.1 lacks '{word}'");
            }
            assert!(page.contains(".SH \"EXAMPLES\""), "{name}.1 has no examples");
        }
    }

    #[test]
    fn every_page_and_completion_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_man(dir.path()).expect("man");
        write_completions(dir.path()).expect("completions");
        for name in ["xsort-bench", "gensort", "valsort"] {
            for file in [format!("{name}.1"), format!("{name}.bash"), format!("_{name}"), format!("{name}.fish")] {
                let text = std::fs::read_to_string(dir.path().join(&file)).expect(&file);
                assert!(text.contains(name), "{file} does not name {name}");
            }
        }
    }
}
