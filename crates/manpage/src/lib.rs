//! Manual pages in roff for xsort's commands (`xsort`, `xsort-bench`, `gensort`, `valsort`),
//! rendered from the same clap `Command` that parses (or, for the reference tools, describes) each
//! command line, so that a page cannot drift from its command. Writing the pages and the shell
//! completions stays with each binary.

use clap::Command;
use std::io::Write;

/// A man page in roff: clap_mangen's title, name, description and options, the synopsis as the
/// help's usage line (`xsort [OPTIONS] [FILE]...`, or a usage text's own), then the closing help
/// text under headings of its own, each paragraph kept as written (`.nf`): that text is laid out
/// by hand. An unindented line that starts with a capital and has a ':' within its first 40
/// characters (`Memory:`, `Exit status: 0 on success`) opens a section; text before the first such
/// line goes under EXAMPLES when it starts with "Example", else under NOTES.
pub fn man_page(mut cmd: Command) -> std::io::Result<Vec<u8>> {
    cmd.build();
    let versioned = cmd.get_version().is_some();
    let extra = cmd.get_after_long_help().or_else(|| cmd.get_after_help()).map(|s| s.to_string());
    let usage = cmd.render_usage().to_string();
    let synopsis = usage.trim_start_matches("Usage:").trim();
    let (name, operands) = synopsis.split_once(' ').unwrap_or((synopsis, ""));
    let man = clap_mangen::Man::new(cmd);
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    out.extend_from_slice(format!(".SH SYNOPSIS\n\\fB{}\\fR {}\n", escape(name), escape(operands)).as_bytes());
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    if let Some(text) = extra {
        out.extend_from_slice(roff_sections(&text).as_bytes());
    }
    if versioned {
        man.render_version_section(&mut out)?;
    }
    out.flush()?;
    Ok(out)
}

/// Help text as roff sections of preformatted lines (see [`man_page`]).
fn roff_sections(text: &str) -> String {
    let mut out = String::new();
    let mut open = false;
    for line in text.lines() {
        let heading = line
            .starts_with(|c: char| c.is_ascii_uppercase())
            .then(|| line.split_once(':'))
            .flatten()
            .filter(|(head, _)| head.len() <= 40 && !head.contains('"'));
        let (head, rest) = match heading {
            Some((head, rest)) => (Some(head.to_uppercase()), rest.trim()),
            None if !open && line.trim().is_empty() => continue,
            None if !open => (Some(if line.starts_with("Example") { "EXAMPLES" } else { "NOTES" }.to_string()), line),
            None => (None, line),
        };
        if let Some(head) = head {
            if open {
                out.push_str(".fi\n");
            }
            out.push_str(&format!(".SH \"{}\"\n.nf\n", escape(&head)));
            open = true;
            if rest.is_empty() {
                continue;
            }
        }
        out.push_str(&escape_line(rest));
    }
    if open {
        out.push_str(".fi\n");
    }
    out
}

/// One line of text for roff: backslashes and dashes escaped, and a leading '.' or '\'' that would
/// read as a request defused.
fn escape_line(line: &str) -> String {
    let text = escape(line);
    if text.starts_with('.') || text.starts_with('\'') {
        format!("\\&{text}\n")
    } else {
        format!("{text}\n")
    }
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-").replace('"', "\\(dq")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_keep_their_lines() {
        let roff = roff_sections("Examples:\n  xsort -k2,2n -o out in\n.hidden\n\nExit status: 0 on success\n");
        assert_eq!(
            roff,
            ".SH \"EXAMPLES\"\n.nf\n  xsort \\-k2,2n \\-o out in\n\\&.hidden\n\n.fi\n.SH \"EXIT STATUS\"\n.nf\n0 on success\n.fi\n"
        );
    }
}
