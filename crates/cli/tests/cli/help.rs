//! The help a person reads first, and the messages for options mistyped: `--help` fits a screen
//! and names every option, `--help-all` has every detail, an ambiguous prefix is refused in GNU's
//! words with every candidate, and a typo gets clap's suggestion on the same line.

use crate::common::{run, Fixture};

/// stdout, stderr and the exit code of `xsort ARGS` with empty stdin.
fn xsort(args: &[&str]) -> (String, String, i32) {
    let f = Fixture::new();
    let out = run(f.cmd().args(args));
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code().unwrap_or(-1))
}

/// The long options an option list names (`--name` at the start of an entry, after the short one).
fn options_listed(help: &str) -> Vec<String> {
    let mut v: Vec<String> = help
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l
                .strip_prefix("-")
                .and_then(|r| r.get(1..))
                .map(|r| r.trim_start_matches(", "))
                .filter(|r| r.starts_with("--"))
                .or(Some(l))?;
            let name = l.strip_prefix("--")?.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).next()?;
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn short_help_fits_a_screen_and_names_every_option() {
    let (short, err, code) = xsort(&["--help"]);
    assert_eq!((code, err.as_str()), (0, ""));
    let lines = short.lines().count();
    assert!(lines <= 73, "--help is {lines} lines; GNU sort's is 73");
    assert!(short.lines().all(|l| l.len() <= 100), "a --help line is wider than 100 columns:\n{short}");
    let (full, _, code) = xsort(&["--help-all"]);
    assert_eq!(code, 0);
    assert!(full.lines().count() > 2 * lines, "--help-all should carry the details --help leaves out");
    let in_full = options_listed(&full);
    assert!(in_full.len() >= 40, "--help-all lists {} options: {in_full:?}", in_full.len());
    assert_eq!(options_listed(&short), in_full, "--help and --help-all list different options");
    for detail in ["Records and keys:", "Nsort statements (--spec):", "\nMemory:\n", "f64be"] {
        assert!(full.contains(detail) && !short.contains(detail), "{detail} belongs to --help-all only");
    }
    assert!(short.contains("--help-all"), "--help says where the rest is");
    assert!(!short.contains("generate-man") && !full.contains("generate-man"), "hidden flags stay hidden");
}

#[test]
fn ambiguous_prefix_is_refused_as_gnu_does() {
    let (out, err, code) = xsort(&["--stat"]);
    assert_eq!(code, 2);
    assert_eq!(out, "");
    assert_eq!(
        err,
        "xsort: option '--stat' is ambiguous; possibilities: '--stats' '--stats-json'\nTry 'xsort --help' for more information.\n"
    );
    let (_, err, code) = xsort(&["--s=x", "in"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "xsort: option '--s=x' is ambiguous; possibilities: '--sort' '--strict' '--stable' '--spec' '--stats' '--stats-json' '--sync'\n"
        ),
        "{err}"
    );
}

#[test]
fn typo_gets_a_suggestion() {
    let (_, err, code) = xsort(&["--sortt", "in"]);
    assert_eq!(code, 2);
    assert_eq!(err, "xsort: unrecognized option '--sortt'; did you mean '--sort'?\nTry 'xsort --help' for more information.\n");
    let (_, err, code) = xsort(&["--key-byte", "0:4", "--recordsize=8", "in"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("xsort: unrecognized option '--recordsize=8'; did you mean '--record-size'?\n"), "{err}");
    let (_, err, code) = xsort(&["-j"]);
    assert_eq!((code, err.as_str()), (2, "xsort: invalid option -- 'j'\nTry 'xsort --help' for more information.\n"));
}

#[test]
fn unique_prefixes_and_exact_names_still_work() {
    let f = Fixture::new();
    let input = f.write("in", b"b\na\n");
    let out = run(f.cmd().args(["--stab", "--out=sorted"]).arg(&input));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(f.path("sorted")).expect("output"), b"a\nb\n");
    // `--stats` is a whole name even though `--stats-json` starts with it.
    let out = run(f.cmd().args(["--stats", "-o", "sorted2"]).arg(&input));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// The installed completions (`--generate-completions DIR`, as `scripts/install.sh` asks for them)
/// offer the words `--method` and `--sort` take, not file names, and leave the hidden flags out.
#[test]
fn completions_offer_values_and_no_hidden_flags() {
    let f = Fixture::new();
    let dir = f.mkdir("completions");
    let out = run(f.cmd().arg("--generate-completions").arg(&dir));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for name in ["xsort.bash", "_xsort", "xsort.fish"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(!text.contains("generate-man") && !text.contains("generate-completions"), "{name} lists a hidden flag");
        for word in ["radix", "merge", "general-numeric", "human-numeric", "month", "numeric", "random", "version"] {
            assert!(text.contains(word), "{name} does not offer {word}");
        }
        assert!(text.contains("--record-size") || text.contains("record-size"), "{name} lost the other options");
    }
    let bash = std::fs::read_to_string(dir.join("xsort.bash")).expect("xsort.bash");
    for flag in ["--method", "--sort"] {
        let case = bash.split(&format!("                {flag})\n")).nth(1).expect("the option's case in xsort.bash");
        let reply = case.lines().next().expect("its first line");
        assert!(reply.contains("compgen -W") && !reply.contains("compgen -f"), "bash completes {flag} with {reply}");
    }
}

#[test]
fn help_and_version_into_a_full_device_fail_as_in_gnu() {
    let f = Fixture::new();
    for option in ["--help", "--version", "--help-all"] {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
        let out = f.cmd().arg(option).stdout(full).output().expect("run xsort");
        assert_eq!(out.status.code(), Some(2), "{option}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "xsort: write error: No space left on device\n", "{option}");
    }
}

#[test]
fn gnu_abbreviations_mean_what_they_mean_to_gnu_sort() {
    let f = Fixture::new();
    f.write("in", b"10\n9\n10\n");
    let dir = f.mkdir("t");
    let out = run(f.cmd().args(["--n", "--st", "--p=1", "--t", dir.to_str().unwrap(), "--buffer=1M", "in"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "9\n10\n10\n");
    // An argument too: `--sort=num` is `--sort=numeric`, as GNU's argmatch takes it.
    let out = run(f.cmd().args(["--sort=num", "in"]));
    assert_eq!((out.status.code(), String::from_utf8_lossy(&out.stdout).as_ref()), (Some(0), "9\n10\n10\n"));
    let out = run(f.cmd().args(["--me", "in", "in"]));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "10\n10\n9\n10\n9\n10\n", "a merge, as GNU sort -m gives it, not a sort");
}

#[test]
fn messages_start_with_the_name_xsort_was_run_as() {
    let f = Fixture::new();
    std::os::unix::fs::symlink(crate::common::bin(), f.path("sort")).expect("symlink");
    let sort = |args: &[&str]| {
        let out = run(std::process::Command::new(f.path("sort")).args(args).current_dir(f.root()).env("LC_ALL", "C"));
        (String::from_utf8_lossy(&out.stderr).into_owned(), out.status.code())
    };
    assert_eq!(sort(&["-j"]), ("sort: invalid option -- 'j'\nTry 'sort --help' for more information.\n".into(), Some(2)));
    let (err, code) = sort(&["no-such-file"]);
    assert!(err.starts_with("sort: ") && err.contains("no-such-file") && err.lines().count() == 1, "{err}");
    assert_eq!(code, Some(2));
    f.write("unsorted", b"b\na\n");
    assert_eq!(sort(&["-c", "unsorted"]), ("sort: unsorted:2: disorder: a\n".into(), Some(1)));
}
