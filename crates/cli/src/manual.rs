//! The manual page and shell completions of `xsort`, made from the same clap definition that parses
//! the command line, so they cannot drift from it. `scripts/install.sh` asks for them through the
//! hidden flags `--generate-man DIR` and `--generate-completions DIR`.

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_complete::Shell;
use std::path::Path;

/// Writes `DIR/xsort.1`.
pub fn write_man(dir: &Path) -> Result<()> {
    let cmd = crate::args::Args::command();
    let page = xsort_manpage::man_page(cmd)?;
    let path = dir.join("xsort.1");
    std::fs::write(&path, page).with_context(|| format!("{}: cannot write the manual page", path.display()))
}

/// Writes the bash, zsh and fish completions of `xsort` into `DIR` (`xsort.bash`, `_xsort`,
/// `xsort.fish`, clap_complete's names).
pub fn write_completions(dir: &Path) -> Result<()> {
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let mut cmd = completion_command();
        clap_complete::generate_to(shell, &mut cmd, "xsort", dir)
            .with_context(|| format!("{}: cannot write the {shell} completions", dir.display()))?;
    }
    Ok(())
}

/// The command line as completions offer it: the words `--method` and `--sort` take rather than
/// file names (the parser itself keeps plain strings, which xsort checks with GNU's message and
/// exit status for a bad `--sort`), and without the hidden flags, which clap_complete would list
/// and which only `scripts/install.sh` uses.
fn completion_command() -> clap::Command {
    let cmd = crate::args::Args::command()
        .mut_arg("method", |a| a.value_parser(["radix", "merge"]))
        .mut_arg("sort_word", |a| a.value_parser(["general-numeric", "human-numeric", "month", "numeric", "random", "version"]));
    let shown: Vec<clap::Arg> = cmd.get_arguments().filter(|a| !a.is_hide_set()).cloned().collect();
    // The version too: `--version` is among the arguments, and clap requires one for it.
    clap::Command::new("xsort").version(env!("CARGO_PKG_VERSION")).disable_help_flag(true).disable_version_flag(true).args(shown)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap checks a command's definition (every `--version` has a version, no two flags share a
    /// name...) only where debug assertions are on: CI runs this test so.
    #[test]
    fn the_parser_and_the_completions_command_are_valid() {
        crate::args::Args::command().debug_assert();
        super::completion_command().debug_assert();
    }
}
