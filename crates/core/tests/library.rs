//! The library API through its public surface only: push/pull sessions in odd chunkings (in memory
//! and spilled), file-to-file sorts, readers and writers, in-memory record sorts, Nsort statements,
//! GNU ordering options (checked against GNU sort itself), misuse, and cleanup when a session is
//! abandoned. Every result is checked against an independent reference sort.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use xsort_core::{Sort, SortError};

/// `n` records of `r` bytes with keys drawn from few values (many ties, to see stability) and a
/// serial number in the last 8 bytes.
fn records(n: usize, r: usize, seed: u64) -> Vec<u8> {
    let mut state = seed | 1;
    let mut out = Vec::with_capacity(n * r);
    for i in 0..n {
        let mut rec = vec![0u8; r];
        for b in rec.iter_mut().take(r - 8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *b = b'a' + (state % 4) as u8;
        }
        rec[r - 8..].copy_from_slice(&(i as u64).to_be_bytes());
        out.extend_from_slice(&rec);
    }
    out
}

/// The stable sort of `data`'s records by bytes `[key.0, key.0 + key.1)`.
fn reference(data: &[u8], r: usize, key: (usize, usize)) -> Vec<u8> {
    let mut recs: Vec<&[u8]> = data.chunks(r).collect();
    recs.sort_by(|a, b| a[key.0..key.0 + key.1].cmp(&b[key.0..key.0 + key.1]));
    recs.concat()
}

/// Pushes `data` in chunks of the given sizes (cycling), then pulls everything with buffers of the
/// given sizes (cycling).
fn push_pull(sort: Sort, data: &[u8], pushes: &[usize], pulls: &[usize]) -> Result<Vec<u8>, SortError> {
    let mut s = sort.start()?;
    let mut at = 0;
    for &n in pushes.iter().cycle() {
        if at == data.len() {
            break;
        }
        let end = (at + n).min(data.len());
        s.push(&data[at..end])?;
        at = end;
    }
    s.finish()?;
    let mut out = Vec::new();
    for &n in pulls.iter().cycle() {
        let mut buf = vec![0u8; n];
        let got = s.pull(&mut buf)?;
        if got == 0 {
            break;
        }
        out.extend_from_slice(&buf[..got]);
    }
    assert!(s.stats().is_some());
    Ok(out)
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn records_pushed_and_pulled_in_odd_chunks() {
    let data = records(20_000, 50, 1);
    let sort = Sort::records(50).key_bytes("3:5").unwrap().threads(2);
    let out = push_pull(sort, &data, &[7 * 50 + 13, 1, 4099, 50], &[50 * 3, 777, 50 * 1000 + 49]).unwrap();
    assert_eq!(out, reference(&data, 50, (3, 5)));
}

#[test]
fn a_spilled_session_merges_and_leaves_no_temp_file() {
    let tmp = tempfile::tempdir().unwrap();
    let data = records(200_000, 40, 2); // 8 MB, under a 1 MiB budget
    let sort = Sort::records(40).key_bytes("0:6").unwrap().memory(1 << 20).temp_dir(tmp.path());
    let mut s = sort.start().unwrap();
    for chunk in data.chunks(65_537) {
        s.push(chunk).unwrap();
    }
    s.finish().unwrap();
    let mut out = Vec::new();
    s.write_to(&mut out).unwrap();
    let stats = s.stats().unwrap();
    assert!(stats.runs > 1, "expected a spill, got {} runs", stats.runs);
    assert_eq!(out, reference(&data, 40, (0, 6)));
    drop(s);
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

#[test]
fn an_expected_length_plans_a_pushed_sort_like_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    let data = records(100_000, 40, 5); // 4 MB under a 512 MiB budget
    let sort = || Sort::records(40).key_bytes("0:6").unwrap().memory(512 << 20).temp_dir(tmp.path());
    let run = |sort: Sort| {
        let mut s = sort.start().unwrap();
        for chunk in data.chunks(100_003) {
            s.push(chunk).unwrap();
        }
        let mut out = Vec::new();
        s.write_to(&mut out).unwrap();
        assert_eq!(out, reference(&data, 40, (0, 6)));
        s.stats().unwrap().clone()
    };
    // Without the length the sort plans for its whole budget.
    let unplanned = run(sort());
    assert!(unplanned.memory_planned_bytes > 256 << 20, "{}", unplanned.memory_planned_bytes);
    // With it, for the records and their entries only; exactly the length still sorts in one pass.
    let planned = run(sort().expected_input_bytes(data.len() as u64));
    assert_eq!(planned.runs, 0);
    assert!(planned.memory_planned_bytes < 32 << 20, "{}", planned.memory_planned_bytes);
    // More input than expected is sorted all the same, past the expected length in runs.
    let more = run(sort().expected_input_bytes(data.len() as u64 / 3));
    assert!(more.runs >= 3, "{} runs", more.runs);
    // Lines take the length too.
    let text: Vec<u8> = (0..50_000u32).flat_map(|i| format!("{}\n", i.wrapping_mul(2_654_435_761) % 100_000).into_bytes()).collect();
    let mut s = Sort::lines().memory(512 << 20).temp_dir(tmp.path()).expected_input_bytes(text.len() as u64).start().unwrap();
    s.push(&text).unwrap();
    let mut out = Vec::new();
    s.write_to(&mut out).unwrap();
    let mut lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    lines.sort();
    assert_eq!(out, lines.concat());
    assert_eq!(s.stats().unwrap().runs, 0);
    drop(s);
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

/// Sets `flag` after `delay`, from another thread.
fn cancel_after(flag: Arc<std::sync::atomic::AtomicBool>, delay: std::time::Duration) -> std::thread::JoinHandle<std::time::Instant> {
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
        std::time::Instant::now()
    })
}

#[test]
fn a_cancelled_sort_stops_soon_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let temp = tmp.path().join("t");
    std::fs::create_dir(&temp).unwrap();
    // 40 MB under a 2 MiB budget: dozens of runs, then merges (a few seconds' work on a loaded VM).
    let data = records(1_000_000, 40, 6);
    let (input, output) = (tmp.path().join("in"), tmp.path().join("out"));
    std::fs::write(&input, &data).unwrap();
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sort = Sort::records(40).key_bytes("0:6").unwrap().memory(2 << 20).temp_dir(&temp).threads(2);
    let setter = cancel_after(flag.clone(), std::time::Duration::from_millis(50));
    let e = sort.clone().cancel_flag(flag.clone()).input_path(&input).output_path(&output).run().unwrap_err();
    let stopped = std::time::Instant::now();
    let late = stopped.duration_since(setter.join().unwrap());
    assert!(matches!(e, SortError::Cancelled), "{e}");
    assert!(late < std::time::Duration::from_millis(500), "stopped {late:?} after the cancel");
    assert!(!output.exists(), "a cancelled sort left its output");
    assert_eq!(entries(&temp), Vec::<String>::new());
    // A flag set before the sort starts stops it at once; so do in-memory sorts.
    let e = sort.clone().cancel_flag(flag.clone()).input_path(&input).output_path(&output).run().unwrap_err();
    assert!(matches!(e, SortError::Cancelled), "{e}");
    let mut copy = data.clone();
    assert!(matches!(sort.clone().cancel_flag(flag.clone()).sort_slice(&mut copy), Err(SortError::Cancelled)));
    assert!(copy == data, "a cancelled in-memory sort changed the records");

    // A session, cancelled from another thread while it waits for pushes after spilling.
    let mut s = sort.clone().start().unwrap();
    s.push(&data[..20_000_000]).unwrap();
    let handle = s.cancel_handle();
    let canceller = std::thread::spawn(move || handle.cancel());
    canceller.join().unwrap();
    let t = std::time::Instant::now();
    assert!(matches!(s.push(&data[20_000_000..]), Err(SortError::Cancelled)));
    assert!(matches!(s.finish(), Err(SortError::Cancelled)));
    assert!(t.elapsed() < std::time::Duration::from_millis(500), "{:?}", t.elapsed());
    assert_eq!(entries(&temp), Vec::<String>::new());
    drop(s);
    // And one cancelled while its output is pulled: the pull fails, nothing is left.
    let mut s = sort.start().unwrap();
    s.push(&data).unwrap();
    s.finish().unwrap();
    let mut buf = vec![0u8; 4000];
    assert_eq!(s.pull(&mut buf).unwrap(), 4000);
    s.cancel_handle().cancel();
    assert!(matches!(s.pull(&mut buf), Err(SortError::Cancelled)));
    assert_eq!(entries(&temp), Vec::<String>::new());
}

#[test]
fn abandoned_sessions_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let data = records(100_000, 40, 3);
    let sort = || Sort::records(40).memory(1 << 20).temp_dir(tmp.path());
    // Dropped while pushing, after runs were spilled.
    let mut s = sort().start().unwrap();
    s.push(&data).unwrap();
    drop(s);
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
    // Dropped after pulling a little of a spilled sort, and with an output file named.
    let target = tmp.path().join("out");
    let mut s = sort().start().unwrap();
    s.push(&data).unwrap();
    s.finish().unwrap();
    let mut buf = vec![0u8; 400];
    assert_eq!(s.pull(&mut buf).unwrap(), 400);
    drop(s);
    let mut s = sort().output_path(&target).start().unwrap();
    s.push(&data[..4000]).unwrap();
    drop(s);
    assert_eq!(entries(tmp.path()), Vec::<String>::new());
}

#[test]
fn misuse_is_an_error_not_a_panic() {
    let usage = |r: Result<usize, SortError>| match r {
        Err(SortError::Usage(m)) => m,
        other => panic!("expected a usage error, got {other:?}"),
    };
    let mut s = Sort::records(10).start().unwrap();
    let mut buf = vec![0u8; 100];
    assert_eq!(usage(s.pull(&mut buf)), "pull before the input was finished");
    s.push(b"0123456789").unwrap();
    s.finish().unwrap();
    assert_eq!(usage(s.push(b"x").map(|_| 0)), "push after the input was finished");
    assert_eq!(usage(s.pull(&mut buf[..9])), "a buffer of 9 bytes cannot hold a record of 10 bytes");
    assert_eq!(s.pull(&mut buf).unwrap(), 10);
    assert_eq!(s.pull(&mut buf).unwrap(), 0);
    assert_eq!(s.pull(&mut buf).unwrap(), 0);

    // A partial record: the error names the input, and later calls repeat it.
    let mut s = Sort::records(10).start().unwrap();
    s.push(b"0123456789abc").unwrap();
    s.finish().unwrap();
    let e = s.pull(&mut buf).unwrap_err().to_string();
    assert_eq!(e, "(pushed input): length is not a multiple of the record size 10 (3 bytes left over)");
    assert!(s.pull(&mut buf).unwrap_err().to_string().contains("the sort failed before"));

    // A sort that writes a file cannot be pulled; one that reads files cannot be pushed.
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    std::fs::write(&input, b"bbbbbbbbbbaaaaaaaaaa").unwrap();
    let mut s = Sort::records(10).input_path(&input).start().unwrap();
    assert!(usage(s.push(b"x").map(|_| 0)).contains("reads its input from files"));
    let mut s = Sort::records(10).output_path(tmp.path().join("o")).start().unwrap();
    s.finish().unwrap();
    assert!(usage(s.pull(&mut buf)).contains("writes its output to a file"));

    // Bad statements and keys are refused when the sort is described or started.
    assert!(matches!(Sort::from_spec("-frobnicate"), Err(SortError::Spec(_))));
    assert!(matches!(Sort::records(10).key_bytes("0:20").unwrap().start(), Err(SortError::BadOption(_))));
    assert!(matches!(Sort::records(10).run(), Err(SortError::Usage(_))));
    assert!(Sort::lines().key_bytes("0:4").is_err());
    assert!(Sort::records(4).gnu_args(["-n"]).is_err());
}

#[test]
fn file_to_file_and_readers_and_writers() {
    let tmp = tempfile::tempdir().unwrap();
    let data = records(5_000, 20, 4);
    let (a, b) = data.split_at(2_000 * 20);
    let input = tmp.path().join("a");
    std::fs::write(&input, a).unwrap();
    let output = tmp.path().join("out");
    let stats = Sort::records(20).key_bytes("0:4").unwrap().input_path(&input).input_bytes(b.to_vec()).output_path(&output).run().unwrap();
    assert_eq!(stats.records, 5_000);
    assert_eq!(std::fs::read(&output).unwrap(), reference(&data, 20, (0, 4)));
    // Further output files get copies; they need an output file to copy.
    let copy = tmp.path().join("copy");
    let sort = || Sort::records(20).key_bytes("0:4").unwrap().input_path(&input);
    sort().output_path(&output).output_copy(xsort_core::OutputCopy { append: true, ..xsort_core::OutputCopy::new(&copy) }).run().unwrap();
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&output).unwrap());
    match sort().output_stdout().output_copy(xsort_core::OutputCopy::new(&copy)).run() {
        Err(SortError::BadOption(m)) => assert!(m.contains("standard output or a writer cannot have them"), "{m}"),
        other => panic!("a copy of standard output: {other:?}"),
    }

    /// A writer the test keeps a handle on.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let out = Shared::default();
    Sort::records(20)
        .key_bytes("0:4")
        .unwrap()
        .input_reader(std::io::Cursor::new(data.clone()), "cursor")
        .output_writer(out.clone())
        .run()
        .unwrap();
    assert_eq!(*out.0.lock().unwrap(), reference(&data, 20, (0, 4)));
}

#[test]
fn records_in_memory() {
    let data = records(30_000, 24, 5);
    let want = reference(&data, 24, (2, 3));
    let sort = Sort::records(24).key_bytes("2:3").unwrap();
    let mut in_place = data.clone();
    sort.sort_slice(&mut in_place).unwrap();
    assert_eq!(in_place, want);
    let mut out = vec![0u8; data.len()];
    sort.sort_into(&data, &mut out).unwrap();
    assert_eq!(out, want);
    let order = sort.sorted_indices(&data).unwrap();
    let gathered: Vec<u8> = order.iter().flat_map(|&i| data[i as usize * 24..][..24].to_vec()).collect();
    assert_eq!(gathered, want);
    // Typed and descending keys: i32 little-endian, descending.
    let nums: Vec<i32> = vec![5, -3, 12, 0, -3, 7];
    let mut recs: Vec<u8> = nums.iter().flat_map(|v| v.to_le_bytes()).collect();
    Sort::records(4).key_bytes("0:4:i32le:r").unwrap().sort_slice(&mut recs).unwrap();
    let back: Vec<i32> = recs.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(back, [12, 7, 5, 0, -3, -3]);
    // Not a whole number of records; nothing to sort.
    let e = sort.sort_slice(&mut [0u8; 25]).unwrap_err().to_string();
    assert_eq!(e, "(records in memory): length 25 is not a multiple of the record size 24 (1 bytes left over)");
    sort.sort_slice(&mut []).unwrap();
}

#[test]
fn lines_follow_gnu_sort() {
    let mut text = Vec::new();
    for i in 0..3000u32 {
        writeln!(text, "{},{},{}", (i * 7919) % 101, ["x", "y", "z"][(i % 3) as usize], i % 13).unwrap();
    }
    for args in [vec!["-t,", "-k2,2", "-k1,1nr"], vec!["-n"], vec!["-t,", "-k3n", "-s"], vec!["-ru"], vec![]] {
        let out = push_pull(Sort::lines().gnu_args(&args).unwrap(), &text, &[1000, 1, 33], &[4096, 10]).unwrap();
        let mut gnu = std::process::Command::new("sort")
            .args(&args)
            .env("LC_ALL", "C")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        gnu.stdin.take().unwrap().write_all(&text).unwrap();
        let want = gnu.wait_with_output().unwrap().stdout;
        assert_eq!(String::from_utf8_lossy(&out), String::from_utf8_lossy(&want), "args {args:?}");
    }
}

#[test]
fn nsort_statements_drive_the_sort() {
    let tmp = tempfile::tempdir().unwrap();
    let data = records(3_000, 16, 6);
    let (input, output) = (tmp.path().join("in"), tmp.path().join("out"));
    std::fs::write(&input, &data).unwrap();
    let spec = format!(
        "-format=size:16 -field=name:k,size:2,off:1,character -key=k -memory=8m -temp_file={} -in_file={} -out_file={}",
        tmp.path().display(),
        input.display(),
        output.display()
    );
    let sort = Sort::from_spec(&spec).unwrap();
    assert!(sort.has_file_input() && sort.has_file_output());
    sort.run().unwrap();
    assert_eq!(std::fs::read(&output).unwrap(), reference(&data, 16, (1, 2)));
    // Delimited records: the second comma-separated field, numerically, descending.
    let sort = Sort::from_spec(
        "-format=delimiter:'\\n' -field=name:a,delimiter:',' -field=name:b,delimiter:',',decimal -field=name:c,delimiter:newline -key=b,descending",
    )
    .unwrap();
    assert_eq!(sort.record_size(), None);
    let out = push_pull(sort, b"p,2,x\nq,10,y\nr,2,z\n", &[5], &[7]).unwrap();
    assert_eq!(out, b"q,10,y\np,2,x\nr,2,z\n");
    // Records in and out: a reformat writes fewer bytes, -match one more per record; each pull
    // returns whole output records.
    let sort = Sort::from_spec("-format=size:16 -field=name:k,size:2,off:1 -key=k -reformat=k -match").unwrap();
    assert_eq!((sort.input_record_size(), sort.record_size(), sort.output_record_size()), (Some(16), Some(2), Some(3)));
    let out = push_pull(sort, &data, &[16 * 7, 16 * 1000], &[5, 3 * 100]).unwrap();
    let mut keys: Vec<&[u8]> = data.chunks(16).map(|r| &r[1..3]).collect();
    keys.sort();
    let want: Vec<u8> =
        keys.iter().enumerate().flat_map(|(i, k)| [&[if i > 0 && keys[i - 1] == *k { b'1' } else { b'0' }][..], k].concat()).collect();
    assert!(out == want, "the keys in order, each after its mark");
}

#[test]
fn the_sort_keeps_to_its_own_threads() {
    // Called from inside a caller's one-thread rayon pool, the sort still runs (on its own pool)
    // and reports the threads it was given (at most the CPUs: a larger request gets them all).
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let caller = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let data = records(50_000, 30, 7);
    let mut out = vec![0u8; data.len()];
    let stats = caller.install(|| {
        let mut s = Sort::records(30).key_bytes("0:4").unwrap().threads(cpus + 1).start().unwrap();
        s.push(&data).unwrap();
        s.finish().unwrap();
        let mut filled = 0;
        while filled < out.len() {
            filled += s.pull(&mut out[filled..]).unwrap();
        }
        assert_eq!(s.pull(&mut [0u8; 30]).unwrap(), 0);
        s.stats().unwrap().clone()
    });
    assert_eq!(stats.threads, cpus);
    assert_eq!(out, reference(&data, 30, (0, 4)));
    assert_eq!(caller.current_num_threads(), 1);
}

/// Keys ordered by a declared comparison (Nsort's `compare=NAME`): alone and after a plain part,
/// in memory, file to file and spilled, against a stable sort by the same order; a comparison
/// that fails stops the sort with its message and leaves no output and no temp file.
#[test]
fn keys_compared_by_a_declared_function() {
    use std::cmp::Ordering;
    use xsort_core::key::custom::declare_comparison;
    // Bytes read from the end: an order that is not the bytes'.
    let backwards = |a: &[u8], b: &[u8]| -> Result<Ordering, String> { Ok(a.iter().rev().cmp(b.iter().rev())) };
    declare_comparison("backwards", Arc::new(backwards)).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let data = records(60_000, 24, 7);
    let input = tmp.path().join("in");
    std::fs::write(&input, &data).unwrap();
    let by = |key: &dyn Fn(&[u8], &[u8]) -> Ordering| {
        let mut recs: Vec<&[u8]> = data.chunks(24).collect();
        recs.sort_by(|a, b| key(a, b));
        recs.concat()
    };
    let alone = by(&|a, b| backwards(&a[2..8], &b[2..8]).unwrap());
    let mixed = by(&|a, b| a[..2].cmp(&b[..2]).then(backwards(&a[2..8], &b[2..8]).unwrap()));
    let specs = [
        ("-format=size:24 -key=position:3,size:6,compare:backwards", &alone),
        ("-format=size:24 -field=name:g,size:2 -field=name:v,size:6,compare=backwards -key=g -key=v", &mixed),
    ];
    for (spec, want) in specs {
        let mut in_place = data.clone();
        Sort::from_spec(spec).unwrap().sort_slice(&mut in_place).unwrap();
        assert!(in_place == *want, "{spec}: in memory");
        let output = tmp.path().join("out");
        Sort::from_spec(spec).unwrap().input_path(&input).output_path(&output).run().unwrap();
        assert!(std::fs::read(&output).unwrap() == *want, "{spec}: file to file");
        let temp = tmp.path().join("t");
        std::fs::create_dir_all(&temp).unwrap();
        let sort = Sort::from_spec(spec).unwrap().memory(1 << 20).temp_dir(&temp);
        let stats = sort.input_path(&input).output_path(&output).run().unwrap();
        assert!(stats.runs > 1, "{spec}: expected a spill, got {} runs", stats.runs);
        assert!(std::fs::read(&output).unwrap() == *want, "{spec}: spilled");
        std::fs::remove_file(&output).unwrap();
    }
    let refuse = |a: &[u8], b: &[u8]| if a == b"dcba" || b == b"dcba" { Err("cannot compare dcba".to_string()) } else { Ok(a.cmp(b)) };
    declare_comparison("refuses", Arc::new(refuse)).unwrap();
    let output = tmp.path().join("out");
    for memory in [1 << 20, 64 << 20] {
        let spec = "-format=size:24 -key=position:1,size:4,compare:refuses";
        let sort = Sort::from_spec(spec).unwrap().memory(memory).temp_dir(tmp.path().join("t"));
        let e = sort.input_path(&input).output_path(&output).run().unwrap_err();
        assert!(matches!(e, SortError::Comparison(_)), "{e:?}");
        assert_eq!(e.to_string(), "the comparison function 'refuses' failed: cannot compare dcba");
        assert!(!output.exists(), "a failed sort left its output");
        assert_eq!(entries(&tmp.path().join("t")), Vec::<String>::new());
    }
    // The same through a reformat (which a compared key keeps off the mapped path).
    let spec = "-format=size:24 -field=name:k,size:4,compare:refuses -field=name:rest,size:20 -key=k -reformat=k";
    let e = Sort::from_spec(spec).unwrap().input_path(&input).output_path(&output).run().unwrap_err();
    assert!(matches!(e, SortError::Comparison(_)), "{e:?}");
    assert!(!output.exists(), "a failed sort left its output");
    // In memory: the failure is the sort's, and the records are left as they were.
    let mut in_place = data.clone();
    let e = Sort::from_spec("-format=size:24 -key=position:1,size:4,compare:refuses").unwrap().sort_slice(&mut in_place).unwrap_err();
    assert!(matches!(e, SortError::Comparison(_)), "{e:?}");
    assert!(in_place == data, "a failed sort in memory changed the records");
    // A name declared again keeps its first function for the sorts defined before.
    let reversed = |a: &[u8], b: &[u8]| -> Result<Ordering, String> { Ok(b.cmp(a)) };
    declare_comparison("flips", Arc::new(backwards)).unwrap();
    let before = Sort::from_spec("-format=size:24 -key=position:3,size:6,compare:flips").unwrap();
    declare_comparison("flips", Arc::new(reversed)).unwrap();
    let mut sorted = data.clone();
    before.sort_slice(&mut sorted).unwrap();
    assert!(sorted == alone, "a redeclaration changed a sort defined before it");
    let e = Sort::from_spec("-format=size:24 -key=position:1,size:4,compare:nobody").unwrap_err().to_string();
    assert!(e.contains("no comparison function named 'nobody' is declared"), "{e}");
}
