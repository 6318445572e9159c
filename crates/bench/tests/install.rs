//! `scripts/install.sh PREFIX` installs the four commands with their manual pages and completions,
//! and the C library with its headers, its Nsort name (`libnsort.so`) and a pkg-config file.
//! The script is run on the binaries this test run built (XSORT_INSTALL_FROM), into a temp prefix.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::BENCH;

/// The profile's directory (target/testing under scripts/test.sh), where `cargo test --workspace`
/// put all four binaries.
fn built() -> PathBuf {
    let dir = Path::new(BENCH).parent().expect("binary dir").to_path_buf();
    for name in ["xsort", "gensort", "valsort"] {
        assert!(dir.join(name).is_file(), "{} is missing: run cargo test --workspace --profile testing", dir.join(name).display());
    }
    dir
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/install.sh")
}

/// Runs install.sh on the built binaries into `prefix`, which must succeed.
fn install_into(prefix: &Path) {
    let out = Command::new("bash").arg(script()).arg(prefix).env("XSORT_INSTALL_FROM", built()).output().expect("run install.sh");
    assert!(out.status.success(), "install.sh failed: {}", String::from_utf8_lossy(&out.stderr));
}

const NAMES: [&str; 4] = ["xsort", "gensort", "valsort", "xsort-bench"];

#[test]
fn installs_binaries_pages_and_completions() {
    let prefix = tempfile::tempdir().expect("tempdir");
    let p = prefix.path();
    install_into(p);
    for name in NAMES {
        let bin = p.join("bin").join(name);
        let copy = std::fs::read(&bin).expect("installed binary");
        assert_eq!(copy, std::fs::read(built().join(name)).expect("built binary"), "{name} is not the built binary");
        let page = std::fs::read_to_string(p.join(format!("share/man/man1/{name}.1"))).expect("man page");
        assert!(page.contains(&format!("\n.TH {name} 1 ")), "{name}.1 has no title: {}", &page[..page.len().min(200)]);
        for section in [".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS"] {
            assert!(page.contains(section), "{name}.1 lacks {section}");
        }
        for file in [
            format!("share/bash-completion/completions/{name}"),
            format!("share/zsh/site-functions/_{name}"),
            format!("share/fish/vendor_completions.d/{name}.fish"),
        ] {
            let text = std::fs::read_to_string(p.join(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(text.contains(name), "{file} does not complete {name}");
        }
    }
    // The installed xsort runs, and its page lists its options.
    let v = Command::new(p.join("bin/xsort")).arg("--version").output().expect("xsort --version");
    assert!(v.status.success() && String::from_utf8_lossy(&v.stdout).starts_with("xsort "));
    // nsort is xsort by another name, which reads Nsort's command line: statements and sort's
    // options mixed.
    assert_eq!(std::fs::read_link(p.join("bin/nsort")).expect("nsort is a link"), Path::new("xsort"));
    let mut nsort = Command::new(p.join("bin/nsort"))
        .args(["-format=separator:comma", "-key=position:2,decimal,descending", "-memory=64m"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("nsort");
    std::io::Write::write_all(&mut nsort.stdin.take().expect("stdin"), b"a,1\nb,10\nc,2\n").expect("write");
    let sorted = nsort.wait_with_output().expect("nsort output");
    assert!(sorted.status.success(), "{}", String::from_utf8_lossy(&sorted.stderr));
    assert_eq!(sorted.stdout, b"b,10\nc,2\na,1\n");
    let page = std::fs::read_to_string(p.join("share/man/man1/xsort.1")).expect("xsort.1");
    for option in ["record\\-size", "key\\-bytes", "temporary\\-directory", "field\\-separator", "stats\\-json"] {
        assert!(page.contains(option), "xsort.1 lacks --{option}");
    }
    assert!(!page.contains("generate\\-man"), "hidden flags stay out of the page");
}

/// bash completes a long option prefix of each command from the installed completion file.
#[test]
fn bash_completes_options() {
    let prefix = tempfile::tempdir().expect("tempdir");
    let p = prefix.path();
    install_into(p);
    for (name, typed, expect) in
        [("xsort", "--record-s", "--record-size"), ("xsort-bench", "--floor-t", "--floor-transfer"), ("valsort", "-", "-q")]
    {
        let file = p.join(format!("share/bash-completion/completions/{name}"));
        let fun = format!("_{}", name.replace('-', "__"));
        let script = format!(
            "source '{}'; COMP_WORDS=({name} {typed}); COMP_CWORD=1; COMP_LINE='{name} {typed}'; COMP_POINT=${{#COMP_LINE}}; {fun} {name} {typed} {name}; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            file.display()
        );
        let out = Command::new("bash").arg("-c").arg(&script).output().expect("bash");
        let words = String::from_utf8_lossy(&out.stdout);
        assert!(
            words.lines().any(|w| w.trim() == expect),
            "{name} {typed}<TAB> offers {words:?} (stderr {})",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A program written for Nsort's library, built against the installed headers: sorts five records
/// through `nsort_*` calls and prints them.
const NSORT_PROGRAM: &str = r#"
#include <nsort.h>
#include <stdio.h>
#include <string.h>
#ifdef BY_DLOPEN
#include <dlfcn.h>
#endif
int main(void) {
    char in[] = "eeeeddddccccbbbbaaaa", out[64];
    size_t size = sizeof out;
    nsort_t ctx;
#ifdef BY_DLOPEN
    void *lib = dlopen("libnsort.so", RTLD_NOW);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    nsort_msg_t (*define)(const char *, unsigned, nsort_error_callback_t *, nsort_t *) = dlsym(lib, "nsort_define");
    nsort_msg_t (*release)(void *, size_t, nsort_t *) = dlsym(lib, "nsort_release_recs");
    nsort_msg_t (*release_end)(nsort_t *) = dlsym(lib, "nsort_release_end");
    nsort_msg_t (*take)(void *, size_t *, nsort_t *) = dlsym(lib, "nsort_return_recs");
    nsort_msg_t (*end)(nsort_t *) = dlsym(lib, "nsort_end");
#else
#define define nsort_define
#define release nsort_release_recs
#define release_end nsort_release_end
#define take nsort_return_recs
#define end nsort_end
#endif
    if (define("-format=size:4 -key=position:1,size:4", 0, NULL, &ctx) != NSORT_SUCCESS) return 2;
    if (release(in, 20, &ctx) != NSORT_SUCCESS || release_end(&ctx) != NSORT_SUCCESS) return 3;
    if (take(out, &size, &ctx) != NSORT_SUCCESS) return 4;
    printf("%.*s\n", (int)size, out);
    return end(&ctx) == NSORT_SUCCESS ? 0 : 5;
}
"#;

/// The C library, its headers, the `libnsort.so` name and the pkg-config file are installed, and a
/// program written for Nsort builds against them and runs, linked with `-lnsort` and loading
/// `libnsort.so` with dlopen.
#[test]
fn installs_the_c_library_under_nsorts_name_too() {
    let prefix = tempfile::tempdir().expect("tempdir");
    let p = prefix.path();
    install_into(p);
    let lib = p.join("lib");
    assert_eq!(std::fs::read_link(lib.join("libnsort.so")).expect("libnsort.so is a link"), Path::new("libxsort.so"));
    assert!(lib.join("libxsort.a").is_file() && p.join("include/xsort.h").is_file());
    let pc = std::fs::read_to_string(lib.join("pkgconfig/xsort.pc")).expect("xsort.pc");
    assert!(pc.contains(&format!("prefix={}\n", p.display())) && pc.contains("Libs: -L${libdir} -lxsort"), "{pc}");
    let source = p.join("prog.c");
    std::fs::write(&source, NSORT_PROGRAM).unwrap();
    let include = format!("-I{}", p.join("include").display());
    for (name, extra) in [("linked", &["-L", lib.to_str().unwrap(), "-lnsort"][..]), ("loaded", &["-DBY_DLOPEN", "-ldl"][..])] {
        let exe = p.join(name);
        let cc = Command::new("cc").arg(&include).arg(&source).arg("-o").arg(&exe).args(extra).output().expect("cc");
        assert!(cc.status.success(), "{name}: cc failed: {}", String::from_utf8_lossy(&cc.stderr));
        let run = Command::new(&exe).env("LD_LIBRARY_PATH", &lib).output().expect("run the program");
        assert!(run.status.success(), "{name}: {:?} {}", run.status, String::from_utf8_lossy(&run.stderr));
        assert_eq!(String::from_utf8_lossy(&run.stdout), "aaaabbbbccccddddeeee\n", "{name}");
    }
}
