//! The `nsort` command: xsort run by the name `nsort` (a link `scripts/install.sh` makes) reads
//! Nsort's command line, where statements (`-format=size:100`, `-key=k`, `-memory=1g`), POSIX sort
//! options (`-k1`, `-T /tmp`, `-o out`) and file names mix in any order, as Nsort's did. The
//! statements are gathered, in order, into one `--spec` argument; everything else is read as by
//! `xsort` itself.

use std::ffi::OsString;

/// Sort's options whose value may be the next argument (which is then never a statement).
const TAKES_NEXT: [&str; 6] = ["-o", "-T", "-k", "-t", "-S", "-y"];

/// Whether xsort was run by the name `nsort`.
pub fn run_as_nsort(program: &str) -> bool {
    program == "nsort"
}

/// `argv` with its Nsort statements gathered into one `--spec` argument after the program name.
/// After `--`, every argument is a file name.
pub fn gather_statements(argv: Vec<OsString>) -> Vec<OsString> {
    let mut args = argv.into_iter();
    let mut out: Vec<OsString> = args.next().into_iter().collect();
    let mut statements: Vec<String> = Vec::new();
    let mut value_next = false;
    let mut operands_only = false;
    for arg in args {
        let text = arg.to_str();
        if !operands_only && !value_next {
            if let Some(t) = text.filter(|t| xsort_core::spec::is_statement(t)) {
                statements.push(t.to_string());
                continue;
            }
        }
        operands_only |= !value_next && text == Some("--");
        value_next = !operands_only && !value_next && text.is_some_and(|t| TAKES_NEXT.contains(&t));
        out.push(arg);
    }
    if !statements.is_empty() {
        out.insert(1, OsString::from("--spec"));
        out.insert(2, OsString::from(statements.join(" ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gathered(args: &[&str]) -> Vec<String> {
        let argv = std::iter::once("nsort").chain(args.iter().copied()).map(OsString::from).collect();
        gather_statements(argv).into_iter().map(|a| a.into_string().unwrap()).collect()
    }

    #[test]
    fn statements_are_gathered_and_sort_options_stay() {
        assert_eq!(
            gathered(&["-format=maximum_size:65535", "-k1", "-T", "/opt", "-o", "OUT", "IN"]),
            ["nsort", "--spec", "-format=maximum_size:65535", "-k1", "-T", "/opt", "-o", "OUT", "IN"]
        );
        assert_eq!(
            gathered(&["-format=size:100", "in", "-key=position:1,size:10", "-mem=1g", "-nr", "-stat"]),
            ["nsort", "--spec", "-format=size:100 -key=position:1,size:10 -mem=1g -stat", "in", "-nr"]
        );
        // A value of an option, and everything after --, is never a statement.
        assert_eq!(gathered(&["-o", "-key", "--", "-memory=1g"]), ["nsort", "-o", "-key", "--", "-memory=1g"]);
        assert_eq!(gathered(&["-include=(a eq 'x y')"]), ["nsort", "--spec", "-include=(a eq 'x y')"]);
    }
}
