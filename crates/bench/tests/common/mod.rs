//! Helpers for the integration tests: run the real xsort-bench binary (and
//! the real xsort next to it) on tiny inputs in a temp directory, read the
//! report back and check it against report.schema.json.

#![allow(dead_code)]

pub mod schema;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub const BENCH: &str = env!("CARGO_BIN_EXE_xsort-bench");

/// The xsort binary the harness uses by default (next to xsort-bench).
pub fn xsort() -> PathBuf {
    let p = Path::new(BENCH).with_file_name("xsort");
    assert!(
        p.is_file(),
        "{} is missing: build it first (cargo build --release -p xsort), or run cargo test --workspace --release",
        p.display()
    );
    p
}

pub struct Bench {
    pub dir: tempfile::TempDir,
    pub out: Output,
}

impl Bench {
    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    pub fn rep(&self) -> PathBuf {
        self.dir.path().join("rep")
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }

    pub fn code(&self) -> Option<i32> {
        self.out.status.code()
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.rep().join(name)).unwrap_or_else(|e| panic!("{name}: {e}\nstderr: {}", self.stderr()))
    }

    /// report.json, parsed and checked against the schema.
    pub fn json(&self) -> Value {
        let v: Value = serde_json::from_str(&self.read("report.json")).expect("report.json parses");
        let errs = schema::check(&load_schema(), &v);
        assert!(errs.is_empty(), "report.json breaks its schema:\n{}", errs.join("\n"));
        v
    }
}

pub fn load_schema() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("report.schema.json");
    serde_json::from_str(&std::fs::read_to_string(p).expect("schema file")).expect("schema parses")
}

/// Runs `xsort-bench ARGS --dir TMP/data --out TMP/rep --no-progress`.
pub fn bench(args: &[&str]) -> Bench {
    bench_with(args, &[])
}

/// [`bench`] with more environment variables.
pub fn bench_with(args: &[&str], env: &[(&str, &str)]) -> Bench {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("mkdir");
    let out = Command::new(BENCH)
        .envs(env.iter().copied())
        .args(args)
        .arg("--dir")
        .arg(&data)
        .arg("--out")
        .arg(dir.path().join("rep"))
        .arg("--no-progress")
        .output()
        .expect("run xsort-bench");
    Bench { dir, out }
}

/// Writes an executable shell script standing in for xsort.
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p
}

/// Shell snippet that finds -o OUT and the last operand IN in "$@".
pub const ARGS: &str = r#"out=; in=; prev=
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out=$a; fi
  prev=$a; in=$a
done"#;
