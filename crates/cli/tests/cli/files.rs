//! The files xsort makes, on the real binary: temp runs and the partial output are private to the
//! user (unnamed, or under a random name with a narrow mode), files planted at predictable names do
//! not stop a sort, and nothing is left behind, even by SIGKILL.

use crate::common::*;
use std::path::Path;
use xsort_testkit::as_nobody;

/// `n` text lines of random letters (1 to 40 of them), each ending in a newline.
fn random_lines(n: usize, seed: u64) -> Vec<u8> {
    let mut g = Rng::new(seed);
    let mut out = Vec::new();
    for _ in 0..n {
        let len = 1 + g.below(40);
        out.extend((0..len).map(|_| b'a' + g.below(26) as u8));
        out.push(b'\n');
    }
    out
}

/// Asserts that `out` holds the lines of `input`, sorted.
fn assert_sorted_lines(out: &Path, input: &[u8]) {
    let got = std::fs::read(out).unwrap_or_else(|e| panic!("read {}: {e}", out.display()));
    assert!(got == sorted_lines(input), "{} is not the sorted input ({} bytes, expected {})", out.display(), got.len(), input.len());
}

#[test]
fn planted_links_at_old_temp_names_do_not_stop_a_spilled_sort() {
    let fx = Fixture::new();
    let input = random_lines(60_000, 1);
    fx.write("in", &input);
    fx.mkdir("t");
    // Links at the names xsort once gave its temp runs (`.xsort-PID-SERIAL.tmp`), made by the shell
    // that then becomes xsort, so PID is xsort's own.
    let plant = "for i in 0 1 2 3 4 5 6 7 8 9; do ln -s /nonexistent t/.xsort-$$-$i.tmp; done";
    ok(fx.cmd_under_sh(plant).args(["-S", TINY, "-T", "t", "-o", "out", "in"]));
    assert_sorted_lines(&fx.path("out"), &input);
    assert_eq!(std::fs::read_dir(fx.path("t")).unwrap().count(), 10, "only the planted links remain");
}

#[test]
fn planted_files_at_old_output_names_do_not_stop_a_sort() {
    let fx = Fixture::new();
    let input = random_lines(2_000, 2);
    fx.write("in", &input);
    // A file at the name xsort once gave its partial output (`.TARGET.xsort-PID.tmp`), made as above.
    ok(fx.cmd_under_sh("echo planted > .out.xsort-$$.tmp && ln -s /nonexistent .in.xsort-$$.tmp").args(["-o", "out", "in"]));
    assert_sorted_lines(&fx.path("out"), &input);
    // `-o in in` too, with a link at the old name.
    ok(fx.cmd_under_sh("ln -sf /nonexistent .in.xsort-$$.tmp").args(["-o", "in", "in"]));
    assert_sorted_lines(&fx.path("in"), &input);
}

#[test]
fn a_target_name_of_255_bytes_works() {
    let fx = Fixture::new();
    let input = random_lines(1_000, 3);
    fx.write("in", &input);
    let name = "n".repeat(255);
    ok(fx.cmd().args(["-o", &name, "in"]));
    assert_sorted_lines(&fx.path(&name), &input);
    // Replacing an existing target of that name, and records as well as lines.
    ok(fx.cmd().args(["-r", "-o", &name, "in"]));
    ok(fx.cmd().args(["--record-size=1", "-o", &name, &name]));
    assert_eq!(std::fs::metadata(fx.path(&name)).unwrap().len(), input.len() as u64);
    fx.assert_clean();
}

/// Whether nobody can open `path` for reading.
fn nobody_can_read(path: &Path) -> bool {
    let mut head = as_nobody("head");
    head.args(["-c", "1"]).arg(path).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    head.status().expect("run setpriv").success()
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
}

#[test]
fn another_user_can_open_neither_temp_runs_nor_the_partial_output() {
    if !xsort_testkit::root() {
        return;
    }
    check_private(&[], true);
}

#[test]
fn another_user_cannot_open_compressed_runs() {
    if !xsort_testkit::root() {
        return;
    }
    // Compressed runs are files of their own, written by the program through a shared descriptor.
    check_private(&["--compress-program=gzip"], true);
}

#[test]
fn another_user_cannot_open_the_partial_output_of_a_new_target() {
    if !xsort_testkit::root() {
        return;
    }
    // A new target ends with 0666 less the umask, but its partial output is 0600 until then.
    check_private(&[], false);
}

/// Runs a spilled sort (with `extra` options) of a private input into a private target (an
/// `existing` one, or a new one), both in a sticky world-writable directory that is also the temp
/// directory, and checks while it runs that each of its files there is private and that nobody can
/// open any of them.
fn check_private(extra: &[&str], existing: bool) {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let fx = Fixture::new();
    // A world-writable sticky directory, like /tmp, reachable by nobody: the temp directory and the
    // target's directory of a sort of a private (0600) input into a private target.
    chmod(fx.root(), 0o755);
    let shared = fx.mkdir("shared");
    chmod(&shared, 0o1777);
    let public = fx.write("shared/public", b"anyone may read this\n");
    chmod(&public, 0o644);
    assert!(nobody_can_read(&public), "setpriv must work for this test to mean anything");
    let target = shared.join("out");
    if existing {
        fx.write("shared/out", b"old secret\n");
        chmod(&target, 0o600);
    }
    let fifo_path = shared.join("in");
    mkfifo(&fifo_path);
    chmod(&fifo_path, 0o600);
    // Held open for reading and writing: xsort never sees the end of its input, so it stays running.
    let mut fifo = std::fs::OpenOptions::new().read(true).write(true).custom_flags(libc::O_NONBLOCK).open(&fifo_path).expect("open FIFO");
    let mut cmd = fx.cmd();
    cmd.args(extra).args(["-S", TINY, "-T", "shared", "-o", "shared/out", "shared/in"]).stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("spawn xsort");
    let pid = child.id();
    feed(&mut fifo, &random_lines(100_000, 4), &mut child);
    // The partial output and at least one run are open: two files of the shared directory.
    let prefix = format!("{}/", shared.display());
    let in_shared = |pid: u32| -> Vec<std::path::PathBuf> {
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_else(|_| Vec::new());
        let ours =
            |fd: &std::path::PathBuf| std::fs::read_link(fd).is_ok_and(|l| l.to_string_lossy().starts_with(&prefix) && !l.ends_with("in"));
        fds.into_iter().filter(ours).collect()
    };
    wait_for(&mut child, "the output and a temp run", || in_shared(pid).len() >= 2);
    let fds = in_shared(pid);
    for fd in &fds {
        // A run may be closed between the listing and this look (compressed runs come and go).
        let (Ok(md), Ok(link)) = (std::fs::metadata(fd), std::fs::read_link(fd)) else { continue };
        assert_eq!(md.mode() & 0o077, 0, "{} ({}) has mode {:o}", fd.display(), link.display(), md.mode() & 0o7777);
        assert!(!nobody_can_read(fd), "nobody opened {} ({})", fd.display(), link.display());
    }
    // Nothing of the sort has a name there that someone could open.
    let names: Vec<_> = std::fs::read_dir(&shared).unwrap().map(|e| e.unwrap().path()).collect();
    for p in &names {
        assert!(p == &public || !nobody_can_read(p), "nobody opened {}", p.display());
    }
    let entries: &[&str] = if existing { &["in", "out", "public"] } else { &["in", "public"] };
    assert_entries(&shared, entries);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_entries(&shared, entries);
    if existing {
        assert_eq!(std::fs::read(&target).unwrap(), b"old secret\n");
    }
}

#[test]
fn a_symbolic_link_as_target_is_written_through() {
    let fx = Fixture::new();
    let input = random_lines(3_000, 5);
    fx.write("in", &input);
    fx.mkdir("sub");
    fx.write("sub/real", b"old\n");
    std::os::unix::fs::symlink("real", fx.path("sub/hop")).unwrap();
    std::os::unix::fs::symlink("sub/hop", fx.path("link")).unwrap();
    std::os::unix::fs::symlink("sub/new", fx.path("dangling")).unwrap();
    for extra in [&[][..], &["-S", TINY, "-T", "tmp"][..]] {
        ok(fx.cmd().args(extra).args(["-o", "link", "in"]));
        assert_sorted_lines(&fx.path("sub/real"), &input);
        assert!(std::fs::symlink_metadata(fx.path("link")).unwrap().file_type().is_symlink(), "the link stays a link");
        // A dangling link creates the file it names, as GNU sort does.
        ok(fx.cmd().args(extra).args(["-o", "dangling", "in"]));
        assert_sorted_lines(&fx.path("sub/new"), &input);
        assert!(std::fs::symlink_metadata(fx.path("dangling")).unwrap().file_type().is_symlink());
        std::fs::remove_file(fx.path("sub/new")).unwrap();
    }
    // The link is also the input: read in full before its destination changes.
    ok(fx.cmd().args(["-o", "link", "link"]));
    assert_sorted_lines(&fx.path("sub/real"), &input);
    assert_entries(&fx.path("sub"), &["hop", "real"]);
    fx.assert_clean();
}

#[test]
fn another_users_link_in_a_sticky_directory_is_not_followed() {
    if !xsort_testkit::root() {
        return;
    }
    let fx = Fixture::new();
    chmod(fx.root(), 0o755);
    let shared = fx.mkdir("shared");
    chmod(&shared, 0o1777);
    let victim = fx.write("victim", b"keep\n");
    fx.write("in", b"b\na\n");
    // nobody plants a link where root will write, as the kernel's protected_symlinks guards against.
    let st = as_nobody("ln").arg("-s").arg(&victim).arg(shared.join("out")).status().unwrap();
    assert!(st.success(), "ln as nobody");
    let msg = fail(fx.cmd().args(["-o", "shared/out", "in"]));
    assert!(msg.contains("shared/out") && msg.contains("Permission denied"), "{msg}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep\n");
    assert!(std::fs::symlink_metadata(shared.join("out")).unwrap().file_type().is_symlink());
}

/// A world-writable sticky directory `shared` (like /tmp) in a fresh fixture with an input `in`.
fn sticky_fixture() -> (Fixture, std::path::PathBuf) {
    let fx = Fixture::new();
    chmod(fx.root(), 0o755);
    let shared = fx.mkdir("shared");
    chmod(&shared, 0o1777);
    fx.write("in", b"secret b\nsecret a\n");
    (fx, shared)
}

/// nobody plants, at `name` in `shared`, a link to `victim`, a 0666 file or a FIFO.
fn plant(shared: &Path, name: &str, what: &str, victim: &Path) -> std::path::PathBuf {
    let at = shared.join(name);
    let st = match what {
        "link" => as_nobody("ln").arg("-s").arg(victim).arg(&at).status(),
        "file" => as_nobody("sh").arg("-c").arg("umask 0 && : > \"$0\"").arg(&at).status(),
        _ => as_nobody("mkfifo").arg("-m").arg("666").arg(&at).status(),
    };
    assert!(st.unwrap().success(), "nobody plants a {what}");
    at
}

#[test]
fn another_users_link_file_or_fifo_at_the_statistics_path_in_a_sticky_directory_is_refused() {
    if !xsort_testkit::root() {
        return;
    }
    // --stats-json follows the output's rules: root's statistics never go through a name another
    // user chose in a sticky directory (the link would truncate and overwrite a root-owned file).
    for what in ["link", "file", "fifo"] {
        let (fx, shared) = sticky_fixture();
        let victim = fx.write("victim", b"keep\n");
        let at = plant(&shared, "s.json", what, &victim);
        fx.write("out", b"old\n");
        let msg = fail(fx.cmd().args(["--stats-json", "shared/s.json", "-o", "out", "in"]));
        assert!(msg.starts_with("xsort: shared/s.json: cannot write statistics: "), "{what}: {msg}");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep\n", "{what}");
        assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"old\n", "{what}: refused before the sort");
        if what == "file" {
            assert_eq!(std::fs::read(&at).unwrap(), b"", "nothing written into the planted file");
        }
        fx.assert_clean();
    }
    // Devices are refused too, wherever they are.
    let (fx, _) = sticky_fixture();
    let msg = fail(fx.cmd().args(["--stats-json", "/dev/null", "-o", "out", "in"]));
    assert_eq!(msg, "xsort: /dev/null: cannot write statistics: not a regular file");
}

#[test]
fn another_users_file_or_fifo_at_the_target_in_a_sticky_directory_is_refused() {
    if !xsort_testkit::root() {
        return;
    }
    // nobody's 0666 file (or FIFO) at root's target would receive root's sorted secret; the
    // kernel's protected_regular/protected_fifos would refuse it, and so does xsort, at once.
    for what in ["file", "fifo"] {
        let (fx, shared) = sticky_fixture();
        let at = plant(&shared, "out", what, Path::new("/nonexistent"));
        let msg = fail(fx.cmd().args(["-o", "shared/out", "in"]));
        assert!(
            msg.starts_with("xsort: shared/out: cannot open: a ")
                && msg.contains("of another user (uid 65534) in the sticky world-writable directory"),
            "{what}: {msg}"
        );
        if what == "file" {
            assert_eq!(std::fs::read(&at).unwrap(), b"", "nothing written into the planted file");
        }
        fx.assert_clean();
    }
    // Root's own file there is written as usual.
    let (fx, _) = sticky_fixture();
    ok(fx.cmd().args(["-o", "shared/own", "in"]));
    ok(fx.cmd().args(["-o", "shared/own", "in"]));
    assert_eq!(std::fs::read(fx.path("shared/own")).unwrap(), b"secret a\nsecret b\n");
}

#[test]
fn a_hard_linked_target_is_updated_in_every_link() {
    use std::os::unix::fs::MetadataExt;
    let fx = Fixture::new();
    let input = random_lines(3_000, 6);
    fx.write("in", &input);
    fx.write("out", b"old contents\n");
    std::fs::hard_link(fx.path("out"), fx.path("other")).unwrap();
    let ino = std::fs::metadata(fx.path("out")).unwrap().ino();
    for extra in [&[][..], &["-S", TINY, "-T", "tmp"][..]] {
        ok(fx.cmd().args(extra).args(["-o", "out", "in"]));
        for name in ["out", "other"] {
            assert_sorted_lines(&fx.path(name), &input);
        }
        assert_eq!(std::fs::metadata(fx.path("out")).unwrap().ino(), ino, "same file");
    }
    fx.assert_clean();
}

#[test]
fn an_input_that_is_another_link_of_the_target_is_read_before_the_rewrite() {
    let fx = Fixture::new();
    let input = random_lines(30_000, 7);
    let sorted = sorted_lines(&input);
    let cases: [&[&str]; 5] =
        [&[], &["-S", TINY, "-T", "tmp"], &["--record-size=1"], &["--record-size=1", "-S", TINY, "-T", "tmp"], &["-m"]];
    for extra in cases {
        // -m merges an input that is already sorted; the others sort the shuffled lines.
        let data = if extra == ["-m"] { &sorted } else { &input };
        fx.write("in", data);
        std::fs::hard_link(fx.path("in"), fx.path("alias")).unwrap();
        ok(fx.cmd().args(extra).args(["-o", "alias", "in"]));
        let got = std::fs::read(fx.path("alias")).unwrap();
        let mut expected = data.clone();
        if extra.contains(&"--record-size=1") {
            expected.sort();
        } else {
            expected = sorted.clone();
        }
        assert!(got == expected, "{extra:?}: wrong output ({} bytes)", got.len());
        assert_eq!(std::fs::read(fx.path("in")).unwrap(), got, "{extra:?}: one file");
        std::fs::remove_file(fx.path("alias")).unwrap();
    }
    fx.assert_clean();
}

#[test]
fn the_owner_group_and_mode_of_the_target_are_kept() {
    use std::os::unix::fs::MetadataExt;
    let fx = Fixture::new();
    let input = random_lines(3_000, 8);
    fx.write("in", &input);
    let out = fx.write("out", b"old\n");
    std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
    chmod(&out, 0o640);
    // As root: the new file takes the owner before it is renamed into place.
    ok(fx.cmd().args(["-o", "out", "in"]));
    assert_sorted_lines(&out, &input);
    let md = std::fs::metadata(&out).unwrap();
    assert_eq!((md.uid(), md.gid(), md.mode() & 0o7777, md.nlink()), (65534, 65534, 0o640, 1));
    fx.assert_clean();
}

#[test]
fn an_owner_that_cannot_be_reproduced_means_a_rewrite_in_place() {
    if !xsort_testkit::root() {
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let fx = Fixture::new();
    chmod(fx.root(), 0o755);
    let shared = fx.mkdir("shared");
    chmod(&shared, 0o1777);
    let input = random_lines(3_000, 9);
    let inp = fx.write("shared/in", &input);
    chmod(&inp, 0o644);
    // nobody's file whose group (root) nobody cannot give to a file of its own.
    let out = fx.write("shared/out", b"old\n");
    std::os::unix::fs::chown(&out, Some(65534), Some(0)).unwrap();
    chmod(&out, 0o664);
    let ino = std::fs::metadata(&out).unwrap().ino();
    let st = as_nobody(bin()).arg("-T").arg(&shared).arg("-o").arg(&out).arg(&inp).status().unwrap();
    assert!(st.success(), "xsort as nobody: {st}");
    assert_sorted_lines(&out, &input);
    let md = std::fs::metadata(&out).unwrap();
    assert_eq!((md.uid(), md.gid(), md.mode() & 0o7777, md.ino()), (65534, 0, 0o664, ino));
    assert_entries(&shared, &["in", "out"]);
}

#[test]
fn a_target_its_owner_cannot_write_is_refused_before_sorting() {
    if !xsort_testkit::root() {
        return;
    }
    let fx = Fixture::new();
    chmod(fx.root(), 0o755);
    let shared = fx.mkdir("shared");
    chmod(&shared, 0o1777);
    let inp = fx.write("shared/in", b"b\na\n");
    chmod(&inp, 0o644);
    let out = fx.write("shared/out", b"read-only\n");
    std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
    chmod(&out, 0o444);
    // GNU sort: "open failed: shared/out: Permission denied"; the writable directory does not matter.
    let o = as_nobody(bin()).args(["-o"]).arg(&out).arg(&inp).output().unwrap();
    let msg = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{msg}");
    assert!(msg.contains("shared/out") && msg.contains("Permission denied"), "{msg}");
    assert_eq!(std::fs::read(&out).unwrap(), b"read-only\n");
    assert_entries(&shared, &["in", "out"]);
}

#[test]
fn a_directory_that_allows_no_new_file_is_named_and_an_existing_target_in_it_is_written() {
    if !xsort_testkit::root() {
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let fx = Fixture::new();
    chmod(fx.root(), 0o755);
    let shared = fx.mkdir("shared");
    chmod(&shared, 0o1777);
    let closed = fx.mkdir("closed");
    chmod(&closed, 0o755);
    let input = random_lines(3_000, 10);
    let inp = fx.write("shared/in", &input);
    chmod(&inp, 0o644);
    // A new target: GNU's message, "open failed: closed/new: Permission denied".
    let o = as_nobody(bin()).args(["-T"]).arg(&shared).arg("-o").arg(closed.join("new")).arg(&inp).output().unwrap();
    let msg = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{msg}");
    let expected = format!("xsort: open failed: {}: Permission denied\n", closed.join("new").display());
    assert_eq!(msg, expected);
    // An existing file nobody may write: written in place, as GNU sort does, the output waiting in -T.
    let out = fx.write("closed/mine", b"old\n");
    std::os::unix::fs::chown(&out, Some(65534), Some(65534)).unwrap();
    let ino = std::fs::metadata(&out).unwrap().ino();
    let st = as_nobody(bin()).args(["-T"]).arg(&shared).arg("-o").arg(&out).arg(&inp).status().unwrap();
    assert!(st.success(), "{st}");
    assert_sorted_lines(&out, &input);
    assert_eq!(std::fs::metadata(&out).unwrap().ino(), ino);
    assert_entries(&closed, &["mine"]);
    assert_entries(&shared, &["in"]);
}

#[test]
fn a_thousand_merge_inputs_under_a_limit_of_64_descriptors() {
    let fx = Fixture::new();
    let (mut names, mut all) = (Vec::new(), Vec::new());
    for i in 0..1000usize {
        // Each input sorted by its key; keys collide across inputs, so the merge's order of ties
        // (input order, with -s) shows whether batches kept the inputs in order.
        let mut lines: Vec<String> = (0..5).map(|j| format!("{:03} {i:04}\n", (i * 7 + j * 131) % 200)).collect();
        lines.sort();
        let name = format!("f{i:04}");
        fx.write(&name, lines.concat().as_bytes());
        all.extend(lines);
        names.push(name);
    }
    all.sort_by(|a, b| a[..3].cmp(&b[..3]));
    let expected = all.concat();
    let cases: [&[&str]; 3] = [&[], &["--batch-size=2"], &["-S", TINY, "--compress-program=gzip"]];
    for extra in cases {
        ok(fx.cmd_under_sh("ulimit -n 64").args(["-m", "-s", "-k1,1"]).args(extra).args(["-o", "out"]).args(&names));
        let got = std::fs::read(fx.path("out")).unwrap();
        assert!(got == expected.as_bytes(), "{extra:?}: wrong merge ({} bytes, expected {})", got.len(), expected.len());
    }
    fx.assert_clean();
}

#[test]
fn merges_need_no_more_descriptors_than_gnu_sort() {
    // GNU's sort-continue.sh and sort-merge-fdlimit.sh: three descriptors free beside the standard
    // ones. Standard input among the inputs (copied to the temp file runs share), and an output that
    // is also an input, made only for the last merge.
    let fx = Fixture::new();
    let mut names = Vec::new();
    for i in 1..=31 {
        fx.write(&format!("in{i:02}"), format!("{i}\n").as_bytes());
        names.push(format!("in{i:02}"));
    }
    let stdin_case = "exec 3<&- 4<&- 5<&- <stdin; ulimit -n 6";
    fx.write("stdin", b"32\n");
    ok(fx.cmd_under_sh(stdin_case).args(["-n", "-m", "-o", "out"]).args(&names).arg("-"));
    let expected: String = (1..=32).map(|i| format!("{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(fx.path("out")).unwrap(), expected);
    fx.write("out", b"6\n");
    let held = "exec 3<&- 4<&- 5<&- 6</dev/null 7<&6 8<&6 9<&6; ulimit -n 10";
    ok(fx.cmd_under_sh(held).args(["-n", "-m", "--batch-size=7", "-o", "out", "out", "in01", "in02", "in03", "in04", "in05", "out"]));
    assert_eq!(std::fs::read_to_string(fx.path("out")).unwrap(), "1\n2\n3\n4\n5\n6\n6\n");
    fx.assert_clean();
}

#[test]
fn a_statistics_path_that_is_the_output_or_an_input_is_refused_before_sorting() {
    let fx = Fixture::new();
    let input = random_lines(1_000, 11);
    fx.write("in", &input);
    fx.write("out", b"keep\n");
    std::os::unix::fs::symlink("out", fx.path("link")).unwrap();
    std::fs::hard_link(fx.path("out"), fx.path("hard")).unwrap();
    // The same name, a link to it, another hard link, another spelling; also a file not yet made.
    for (stats, output) in [("out", "out"), ("link", "out"), ("out", "link"), ("hard", "out"), ("./out", "out"), ("new", "./new")] {
        for extra in [&[][..], &["--record-size=1"][..]] {
            let msg = fail(fx.cmd().args(extra).args(["--stats-json", stats, "-o", output, "in"]));
            assert_eq!(msg, format!("xsort: {stats}: --stats-json names the output file"), "{stats} / {output}");
            assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"keep\n");
            assert!(!fx.path("new").exists());
        }
    }
    // Nor may it be an input, which the statistics would overwrite.
    std::os::unix::fs::symlink("in", fx.path("in-link")).unwrap();
    for stats in ["in", "./in", "in-link"] {
        let msg = fail(fx.cmd().args(["--stats-json", stats, "-o", "out", "in"]));
        assert_eq!(msg, format!("xsort: {stats}: --stats-json names an input file"));
        assert!(std::fs::read(fx.path("in")).unwrap() == input, "the input changed");
    }
    std::fs::remove_file(fx.path("in-link")).unwrap();
    // A different file is fine.
    ok(fx.cmd().args(["--stats-json", "s.json", "-o", "out", "in"]));
    assert_sorted_lines(&fx.path("out"), &input);
    read_stats(&fx.path("s.json"));
    fx.assert_clean();
}

#[test]
fn an_unwritable_statistics_path_fails_before_the_output_is_committed() {
    let fx = Fixture::new();
    fx.write("in", b"b\na\n");
    fx.write("out", b"keep\n");
    fx.mkdir("dir");
    for stats in ["missing/s.json", "dir"] {
        for extra in [&[][..], &["--record-size=2"][..]] {
            let msg = fail(fx.cmd().args(extra).args(["--stats-json", stats, "-o", "out", "in"]));
            assert!(msg.starts_with(&format!("xsort: {stats}: cannot write statistics")), "{msg}");
            assert_eq!(std::fs::read(fx.path("out")).unwrap(), b"keep\n", "{stats}: the output must not be committed");
        }
    }
    // A sort that fails leaves no statistics file behind, and an existing one as it was.
    fail(fx.cmd().args(["--stats-json", "s.json", "-o", "out", "nonexistent"]));
    assert!(!fx.path("s.json").exists());
    fx.write("old.json", b"{}\n");
    fail(fx.cmd().args(["--stats-json", "old.json", "-o", "out", "nonexistent"]));
    assert_eq!(std::fs::read(fx.path("old.json")).unwrap(), b"{}\n");
    fx.assert_clean();
}
