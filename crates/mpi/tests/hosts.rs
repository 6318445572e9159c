//! xsort-mpi across "hosts" that reach each other only over TCP, built on this one machine from
//! Linux namespaces: sorted records and lines, into one shared output and into node-local parts,
//! are byte for byte `xsort`'s output; a host killed in the middle of a sort leaves every old
//! target as it was and no temp file on any host, and `mpirun` fails within a bounded time; and
//! the exchange's rate over TCP is reported beside shared memory's (not asserted).
//!
//! How the hosts are built (all of it undone by [`Hosts`]' `Drop`, the test passing or not):
//! - a network namespace per host (`ip netns add`), with a veth pair whose host end is `eth0`
//!   (10.213.0.N/24) and whose other end is attached to a bridge in a namespace of its own; the
//!   addresses exist only there, nothing is routed, and the root namespace gets no interface;
//! - per host, a persistent mount namespace with a tmpfs of its own at `local/` (the node-local
//!   directory, the same path on every host, as on a real cluster: no host sees another's files)
//!   and a UTS namespace with its own host name (`host0`, ...); the namespace files are bind
//!   mounts on a small private tmpfs in the test's directory (the persistent namespaces outlive
//!   every process in them, so a killed host's files can still be inspected);
//! - `shared/`, a plain directory that every host sees at the same path (the shared files);
//! - `mpirun` runs in host 0 (`nsenter`), with a hostfile of the hosts' addresses and
//!   `tests/netns-agent.sh` as its remote launcher (`plm_rsh_agent`, in place of ssh), which
//!   runs Open MPI's `orted` inside the host named; runtime and messages (`oob`, `btl tcp`) are
//!   limited to 10.213.0.0/24, so ranks on different hosts talk over the veths.
//!
//! The tests need root (CI runs them as root). Where they cannot build the hosts, they say so
//! (`NOT RUN: ...`) and pass, unless `CI` is set: then they fail. They run one at a time (the
//! rate measurement needs the machine to itself).

use serde_json::Value;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use xsort_sortbench::{generate_file, GenOptions};

const XSORT_MPI: &str = env!("CARGO_BIN_EXE_xsort-mpi");

/// The network the hosts share, and nowhere else: only on the veths inside the test's namespaces.
const SUBNET: &str = "10.213.0.0/24";

/// The start of every namespace's name (`xsmh-PID-N-h0`, `xsmh-PID-N-br`): a later run removes
/// those of a test process that died without its `Drop` (SIGKILL).
const NETNS_PREFIX: &str = "xsmh-";

/// The start of every test directory's name in the temp directory (`xsort-mpi-hosts-PID-...`).
const DIR_PREFIX: &str = "xsort-mpi-hosts-";

/// How long any one `mpirun` may run before the test kills every host's processes and fails.
const JOB_LIMIT: Duration = Duration::from_secs(90);

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
static NEXT: AtomicUsize = AtomicUsize::new(0);

/// The tests of this file take turns: each builds its own hosts, but several jobs at once on a
/// small machine would time each other out, and the rate measurement wants the machine alone.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// The single-node xsort beside this test's binary (target/PROFILE/deps/..).
fn xsort() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let bin = exe.parent().and_then(Path::parent).expect("target dir").join("xsort");
    assert!(bin.exists(), "{} is missing: build it first, with the same profile (cargo build --profile testing -p xsort)", bin.display());
    bin
}

/// `n` hosts, or None when they cannot be made here (`xsort_testkit::not_run` says why, and fails
/// under CI).
fn hosts(n: usize) -> Option<Hosts> {
    if !xsort_testkit::root() {
        return None;
    }
    match Hosts::new(n) {
        Ok(h) => Some(h),
        Err(why) => {
            xsort_testkit::not_run(&format!("cannot build the namespace hosts: {why}"));
            None
        }
    }
}

/// Runs a setup command; Err with its words when it cannot start or fails.
fn run(program: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(program).args(args).stdin(Stdio::null()).output().map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{program} {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// The processes in network namespace `netns`.
fn pids_in(netns: &str) -> Vec<libc::pid_t> {
    let out = Command::new("ip").args(["netns", "pids", netns]).stdin(Stdio::null()).output();
    out.map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().filter_map(|p| p.parse().ok()).collect()).unwrap_or_default()
}

/// SIGKILL to every process in `netns` (as `ip netns pids NAME | xargs kill -9`), until none is
/// left (2 s at most); how many there were.
fn kill_all_in(netns: &str) -> usize {
    let mut killed = std::collections::BTreeSet::new();
    let start = Instant::now();
    for _ in 0..200 {
        let pids = pids_in(netns);
        if pids.is_empty() || start.elapsed() > Duration::from_secs(2) {
            break;
        }
        for pid in pids {
            // SAFETY: kill sends a signal; the pid is one `ip netns pids` listed in a namespace
            // this test made, where only the test's own processes run.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed.insert(pid);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    killed.len()
}

/// Detaches the mount at `path` (errors ignored: cleanup does what it can).
fn unmount(path: &Path) {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else { return };
    // SAFETY: `c` is a NUL-terminated path that lives across the call; umount2 touches nothing else.
    unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
}

/// Whether process `pid` exists.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// What an earlier test process left when it was killed outright (its `Drop` never ran): its
/// namespaces, mounts and directories, found by the process id in their names.
fn clean_stale() {
    let dead = |rest: &str| rest.split('-').next().and_then(|p| p.parse::<u32>().ok()).is_some_and(|p| !alive(p));
    let list = Command::new("ip").args(["netns", "list"]).output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    for name in list.unwrap_or_default().lines().filter_map(|l| l.split_whitespace().next()) {
        if name.strip_prefix(NETNS_PREFIX).is_some_and(dead) {
            kill_all_in(name);
            let _ = run("ip", &["netns", "del", name]);
        }
    }
    let tmp = std::env::temp_dir();
    let stale_dir = |p: &Path| {
        p.strip_prefix(&tmp).ok().and_then(|r| r.iter().next()).and_then(|d| d.to_str()?.strip_prefix(DIR_PREFIX)).is_some_and(dead)
    };
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut mounts: Vec<PathBuf> = info.lines().filter_map(|l| l.split(' ').nth(4)).map(PathBuf::from).filter(|p| stale_dir(p)).collect();
    mounts.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    for m in &mounts {
        unmount(m);
    }
    for e in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        if stale_dir(&e.path()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// A finished `mpirun`.
struct Ran {
    status: ExitStatus,
    stderr: String,
    elapsed: Duration,
}

/// The hosts: namespaces, their files and the test's directory, removed when dropped.
struct Hosts {
    dir: tempfile::TempDir,
    /// The start of this instance's namespace names, `xsmh-PID-N`.
    name: String,
    count: usize,
    /// Network namespaces made so far (the bridge's first).
    netns: Vec<String>,
    /// Namespace files bind-mounted so far.
    ns_files: Vec<PathBuf>,
    /// Whether the tmpfs for the namespace files is mounted.
    ns_dir_mounted: bool,
    /// Jobs started, for their log files' names.
    jobs: usize,
}

impl Hosts {
    fn new(count: usize) -> Result<Hosts, String> {
        for tool in ["ip", "nsenter", "unshare", "mpirun"] {
            Command::new(tool)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map_err(|e| format!("{tool}: {e} (scripts/prerequisites.sh installs iproute2, util-linux and openmpi-bin)"))?;
        }
        clean_stale();
        let dir = tempfile::Builder::new()
            .prefix(&format!("{DIR_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|e| format!("test directory: {e}"))?;
        // The agent's map splits its lines at blanks.
        if dir.path().to_string_lossy().contains(char::is_whitespace) {
            return Err(format!("the temp directory {} has blanks in its path", dir.path().display()));
        }
        let name = format!("{NETNS_PREFIX}{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let mut hosts = Hosts { dir, name, count, netns: Vec::new(), ns_files: Vec::new(), ns_dir_mounted: false, jobs: 0 };
        hosts.build()?;
        Ok(hosts)
    }

    /// Makes the bridge, the hosts and their files (what is made is recorded first, so that
    /// `Drop` undoes it when a later step fails).
    fn build(&mut self) -> Result<(), String> {
        for d in ["ns", "shared", "local", "tmp", "logs"] {
            std::fs::create_dir(self.path(d)).map_err(|e| format!("{d}: {e}"))?;
        }
        // Namespace files must be bind-mounted where mounts do not propagate (else the new
        // namespace would hold a copy of its own file): a private tmpfs of the test's own.
        let ns = self.path_str("ns");
        run("mount", &["-t", "tmpfs", "-o", "size=1m,mode=0700", "tmpfs", &ns])?;
        self.ns_dir_mounted = true;
        run("mount", &["--make-private", &ns])?;
        let bridge = format!("{}-br", self.name);
        self.netns.push(bridge.clone());
        run("ip", &["netns", "add", &bridge])?;
        run("ip", &["-n", &bridge, "link", "add", "br0", "type", "bridge"])?;
        run("ip", &["-n", &bridge, "link", "set", "br0", "up"])?;
        let mut map = String::new();
        for i in 0..self.count {
            let netns = self.netns(i);
            self.netns.push(netns.clone());
            run("ip", &["netns", "add", &netns])?;
            // Made inside the bridge's namespace, its peer straight into the host's: neither end
            // ever exists in the root namespace.
            let veth = format!("v{i}");
            run("ip", &["-n", &bridge, "link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &netns])?;
            run("ip", &["-n", &bridge, "link", "set", &veth, "master", "br0", "up"])?;
            run("ip", &["-n", &netns, "addr", "add", &format!("{}/24", self.addr(i)), "dev", "eth0"])?;
            run("ip", &["-n", &netns, "link", "set", "eth0", "up"])?;
            run("ip", &["-n", &netns, "link", "set", "lo", "up"])?;
            let (mnt, uts) = (self.path(&format!("ns/mnt{i}")), self.path(&format!("ns/uts{i}")));
            for f in [&mnt, &uts] {
                std::fs::write(f, b"").map_err(|e| format!("{}: {e}", f.display()))?;
                self.ns_files.push(f.clone());
            }
            // The host's own name and node-local tmpfs (with its TMPDIR), in namespaces that
            // persist through their files: the tmpfs lives as long as the mount namespace does.
            let local = self.path_str("local");
            let setup = format!("hostname host{i} && mount -t tmpfs -o size=1g,mode=0755 tmpfs {local} && mkdir {local}/tmp");
            let (m, u) = (format!("--mount={}", mnt.display()), format!("--uts={}", uts.display()));
            run("unshare", &[&m, &u, "--propagation", "private", "sh", "-c", &setup])?;
            map += &format!("{} {netns} {} {} /proc/{}/root\n", self.addr(i), mnt.display(), uts.display(), std::process::id());
        }
        std::fs::write(self.path("hosts.map"), map).map_err(|e| format!("hosts.map: {e}"))?;
        Ok(())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn path_str(&self, name: &str) -> String {
        self.path(name).to_str().expect("a UTF-8 temp path").to_owned()
    }

    /// A file in the shared directory.
    fn shared(&self, name: &str) -> String {
        self.path_str(&format!("shared/{name}"))
    }

    /// A file in the node-local directory (the same path on every host, each its own tmpfs).
    fn local(&self, name: &str) -> String {
        self.path_str(&format!("local/{name}"))
    }

    fn netns(&self, host: usize) -> String {
        format!("{}-h{host}", self.name)
    }

    fn addr(&self, host: usize) -> String {
        format!("10.213.0.{}", host + 1)
    }

    /// `nsenter` into host `host`'s network, mount and UTS namespaces, then `program`.
    fn enter(&self, host: usize, program: &str) -> Command {
        let mut cmd = Command::new("nsenter");
        cmd.arg(format!("--net=/run/netns/{}", self.netns(host)))
            .arg(format!("--mount={}", self.path(&format!("ns/mnt{host}")).display()))
            .arg(format!("--uts={}", self.path(&format!("ns/uts{host}")).display()))
            .arg(format!("--wd={}", self.path("shared").display()))
            .arg("--")
            .arg(program);
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Runs shell `script` on host `host` (quick file work); its standard output.
    fn on(&self, host: usize, script: &str) -> Vec<u8> {
        let out = self.enter(host, "sh").args(["-c", script]).output().expect("nsenter");
        assert!(out.status.success(), "host{host}: {script}: {}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    /// Host `host`'s node-local file `name`.
    fn read_local(&self, host: usize, name: &str) -> Vec<u8> {
        self.on(host, &format!("cat {}", self.local(name)))
    }

    /// Everything in host `host`'s node-local directory, relative to it (directories too).
    fn local_listing(&self, host: usize) -> Vec<String> {
        let local = self.local("");
        let found = self.on(host, &format!("find {local} -mindepth 1"));
        let mut v: Vec<String> = String::from_utf8_lossy(&found).lines().map(|l| l.trim_start_matches(&local).to_owned()).collect();
        v.sort();
        v
    }

    /// Everything in the shared directory.
    fn shared_listing(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path("shared"))
            .expect("shared dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// Bytes received on each host's `eth0` so far.
    fn rx_bytes(&self) -> Vec<u64> {
        (0..self.count)
            .map(|i| {
                let out = Command::new("ip").args(["-n", &self.netns(i), "-s", "-j", "link", "show", "eth0"]).output().expect("ip");
                let v: Value = serde_json::from_slice(&out.stdout).expect("ip -j output");
                v[0]["stats64"]["rx"]["bytes"].as_u64().expect("rx bytes")
            })
            .collect()
    }

    /// Starts `xsort-mpi ARGS` across the hosts, `slots[i]` ranks on host i (filled in order, so
    /// the lowest ranks go to host 0), from host 0 over TCP; `env` reaches every rank.
    fn start(&mut self, slots: &[usize], args: &[&str], env: &[(&str, &str)]) -> Job {
        let hostfile: String =
            slots.iter().enumerate().filter(|(_, &s)| s > 0).map(|(i, s)| format!("{} slots={s}\n", self.addr(i))).collect();
        let file = self.path(&format!("logs/hostfile{}", self.jobs));
        std::fs::write(&file, hostfile).expect("hostfile");
        let np = slots.iter().sum::<usize>().to_string();
        let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/netns-agent.sh");
        // ob1 over TCP between hosts (and shared memory between ranks on one host): left to
        // itself Open MPI may probe UCX, which has nothing to do here. Its runtime (oob) and
        // messages (btl) use the hosts' network only; orted is started from mpirun directly
        // (no tree spawn), so only host 0 runs the agent.
        let btl = if slots.iter().any(|&s| s > 1) { "self,vader,tcp" } else { "self,tcp" };
        let mut line: Vec<String> = ["--hostfile", file.to_str().expect("path"), "-np", &np].iter().map(|s| s.to_string()).collect();
        for (k, v) in [
            ("plm_rsh_agent", agent.to_str().expect("path")),
            ("plm_rsh_no_tree_spawn", "1"),
            ("oob_tcp_if_include", SUBNET),
            ("btl_tcp_if_include", SUBNET),
            ("btl", btl),
            ("pml", "ob1"),
        ] {
            line.extend(["--mca".to_owned(), k.to_owned(), v.to_owned()]);
        }
        for (k, _) in env {
            line.extend(["-x".to_owned(), k.to_string()]);
        }
        self.launch(&line, args, env)
    }

    /// Starts `xsort-mpi ARGS` on `np` ranks all on host 0, over shared memory.
    fn start_one_host(&mut self, np: usize, args: &[&str]) -> Job {
        let line: Vec<String> = ["--oversubscribe", "-np", &np.to_string(), "--mca", "btl", "self,vader", "--mca", "pml", "ob1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        self.launch(&line, args, &[])
    }

    fn launch(&mut self, line: &[String], args: &[&str], env: &[(&str, &str)]) -> Job {
        self.jobs += 1;
        let (out, err) = (self.path(&format!("logs/{}.out", self.jobs)), self.path(&format!("logs/{}.err", self.jobs)));
        let mut cmd = self.enter(0, "mpirun");
        cmd.args(line).arg(XSORT_MPI).args(args);
        // Every host's TMPDIR is its node-local one (Open MPI's session directories go there).
        cmd.env("TMPDIR", self.local("tmp")).env("XSORT_NETNS_HOSTS", self.path("hosts.map"));
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1").env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        // Into files, not pipes: a chatty failure cannot block mpirun on a full pipe.
        cmd.stdout(std::fs::File::create(&out).expect("log")).stderr(std::fs::File::create(&err).expect("log"));
        let child = cmd.spawn().expect("nsenter mpirun");
        Job { child, err, started: Instant::now() }
    }

    /// Waits for `job` (at most [`JOB_LIMIT`]: past it, every host's processes are killed and the
    /// test fails).
    fn wait(&self, mut job: Job) -> Ran {
        loop {
            if let Some(status) = job.child.try_wait().expect("wait") {
                let stderr = std::fs::read_to_string(&job.err).unwrap_or_default();
                return Ran { status, stderr, elapsed: job.started.elapsed() };
            }
            if job.started.elapsed() > JOB_LIMIT {
                self.kill_everything();
                let _ = job.child.wait();
                panic!("mpirun did not end within {JOB_LIMIT:?}: {}", std::fs::read_to_string(&job.err).unwrap_or_default());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Runs `xsort-mpi ARGS` across the hosts and expects success; its statistics must show each
    /// rank on the host the slots put it on.
    fn sort_across(&mut self, slots: &[usize], args: &[&str]) -> Value {
        let stats = self.shared("s.json");
        let args = [&["--stats-json", stats.as_str()][..], args].concat();
        let job = self.start(slots, &args, &[]);
        let ran = self.wait(job);
        assert!(ran.status.success(), "{slots:?} {args:?} failed: {}", ran.stderr);
        let stats: Value = serde_json::from_slice(&std::fs::read(&stats).expect("stats")).expect("stats JSON");
        std::fs::remove_file(self.shared("s.json")).expect("rm stats");
        let want: Vec<String> = slots.iter().enumerate().flat_map(|(i, &s)| std::iter::repeat_n(format!("host{i}"), s)).collect();
        let got: Vec<&str> = stats["per_rank"].as_array().expect("per_rank").iter().map(|r| r["host"].as_str().unwrap_or("")).collect();
        assert_eq!(got, want, "the ranks' hosts");
        stats
    }

    /// The single-node xsort, in the root namespace, on the shared files.
    fn single(&self, args: &[&str]) {
        let out = Command::new(xsort()).args(args).env("TMPDIR", self.path("tmp")).output().expect("xsort");
        assert!(out.status.success(), "xsort {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn kill_everything(&self) {
        for ns in &self.netns {
            kill_all_in(ns);
        }
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        // The processes first (they hold the namespaces and the node-local tmpfs), then the
        // namespace files (the last references to the mount and UTS namespaces: their tmpfs go
        // with them), the network namespaces (their veths and the bridge go with them), and the
        // tmpfs the files were on; the directory itself goes with `dir`, after this.
        self.kill_everything();
        for f in self.ns_files.iter().rev() {
            unmount(f);
        }
        for ns in self.netns.iter().rev() {
            let _ = run("ip", &["netns", "del", ns]);
        }
        if self.ns_dir_mounted {
            unmount(&self.path("ns"));
        }
    }
}

/// A started `mpirun`.
struct Job {
    child: std::process::Child,
    err: PathBuf,
    started: Instant,
}

/// Sorts the shared `inputs` with xsort and across three hosts (one rank each, and once four
/// ranks, two sharing host 0); the outputs must be the same bytes.
fn shared_same_as_xsort(h: &mut Hosts, opts: &[&str], inputs: &[&str], slots: &[&[usize]]) {
    let inputs: Vec<String> = inputs.iter().map(|i| h.shared(i)).collect();
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    let (reference, out) = (h.shared("ref"), h.shared("out"));
    h.single(&[opts, &["-o", &reference], &inputs].concat());
    for s in slots {
        h.sort_across(s, &[opts, &["-o", &out], &inputs].concat());
        let same = std::fs::read(&out).expect("out") == std::fs::read(&reference).expect("ref");
        assert!(same, "{s:?} {opts:?}: the output differs from xsort's");
    }
}

/// Node-local inputs `name{rank}` (copied from the shared directory to host r's own) sorted
/// into node-local parts `part{rank}`: the parts, read from each host in rank order, must be
/// xsort's output of the inputs in rank order, and each host must hold its own files only.
fn parts_same_as_xsort(h: &mut Hosts, opts: &[&str], name: &str) {
    let inputs: Vec<String> = (0..h.count).map(|r| h.shared(&format!("{name}{r}"))).collect();
    let reference = h.shared("ref");
    h.single(&[opts, &["-o", &reference], &inputs.iter().map(String::as_str).collect::<Vec<_>>()].concat());
    for (r, input) in inputs.iter().enumerate() {
        h.on(r, &format!("cp {input} {} && printf old > {}", h.local(&format!("{name}{r}")), h.local(&format!("part{r}"))));
    }
    let (out, input) = (h.local("part{rank}"), h.local(&format!("{name}{{rank}}")));
    let slots = vec![1; h.count];
    h.sort_across(&slots, &[opts, &["-o", &out, &input]].concat());
    let parts: Vec<u8> = (0..h.count).flat_map(|r| h.read_local(r, &format!("part{r}"))).collect();
    assert!(parts == std::fs::read(&reference).expect("ref"), "{opts:?}: the parts in rank order differ from xsort's output");
    for r in 0..h.count {
        let mut want = [format!("{name}{r}"), format!("part{r}"), "tmp".into()];
        want.sort();
        assert_eq!(h.local_listing(r), want, "host{r}'s node-local directory");
    }
}

#[test]
fn records_sorted_across_hosts_over_tcp_match_xsort() {
    let _turn = one_at_a_time();
    let Some(mut h) = hosts(3) else { return };
    generate_file(Path::new(&h.shared("a")), 0, 20_000, GenOptions { ascii: false, skew: false }, 1).expect("gensort");
    generate_file(Path::new(&h.shared("b")), 0, 7_001, GenOptions { ascii: false, skew: true }, 1).expect("gensort");
    // The first job's received bytes must have come in through each host's veth: the ranks did
    // talk over TCP between the namespaces.
    let before = h.rx_bytes();
    let stats = h.sort_across(&[1, 1, 1], &["--record-size", "100", "--key-bytes", "0:10", "-o", &h.shared("out"), &h.shared("a")]);
    let after = h.rx_bytes();
    for (r, rank) in stats["per_rank"].as_array().expect("per_rank").iter().enumerate() {
        let received = rank["exchange"]["received_bytes"].as_u64().expect("received_bytes");
        assert!(
            received > 100_000 && after[r] - before[r] >= received,
            "host{r}: eth0 received {} bytes, the rank {received}",
            after[r] - before[r]
        );
    }
    let three: &[&[usize]] = &[&[1, 1, 1]];
    // Sorted in place; few distinct keys (ties: equal keys must keep input order across hosts);
    // the engine's path with many rounds (-S 2M); folding equal keys (-u: they meet on one host).
    shared_same_as_xsort(&mut h, &["--record-size", "100", "--key-bytes", "0:10"], &["a", "b"], &[&[1, 1, 1], &[2, 1, 1]]);
    shared_same_as_xsort(&mut h, &["--record-size", "100", "--key-bytes", "0:1"], &["a", "b"], three);
    shared_same_as_xsort(&mut h, &["--record-size", "100", "--key-bytes", "1:1", "-S", "2M"], &["b", "a"], three);
    shared_same_as_xsort(&mut h, &["--record-size", "100", "--key-bytes", "0:1", "-u"], &["a", "b"], three);
    for r in 0..3 {
        let count = 5_000 + 1_000 * r as u64;
        generate_file(Path::new(&h.shared(&format!("in{r}"))), 5_000 * r as u128, count, GenOptions::default(), 1).expect("gensort");
    }
    parts_same_as_xsort(&mut h, &["--record-size", "100", "--key-bytes", "0:10"], "in");
    parts_same_as_xsort(&mut h, &["--record-size", "100", "--key-bytes", "0:2", "-S", "2M"], "in");
}

/// Text with keys, numbers and duplicates (as the cluster tests'), `lines` lines from `seed`.
fn text(lines: usize, seed: u64) -> String {
    let mut a = String::new();
    let mut x: u64 = seed;
    for i in 0..lines {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let word = ["pear", "Apple", "fig", "apple", "kiwi"][(x >> 33) as usize % 5];
        a += &format!("{word},{},{}{}\n", (x >> 40) as i64 % 1000 - 500, "w".repeat((x >> 20) as usize % 40), i % 7);
    }
    a
}

#[test]
fn lines_sorted_across_hosts_over_tcp_match_xsort() {
    let _turn = one_at_a_time();
    let Some(mut h) = hosts(3) else { return };
    std::fs::write(h.shared("a.txt"), text(30_000, 12345)).expect("write");
    // A last line without a newline.
    std::fs::write(h.shared("b.txt"), "3\n1\n\n2\nlast without newline").expect("write");
    let three: &[&[usize]] = &[&[1, 1, 1]];
    shared_same_as_xsort(&mut h, &[], &["a.txt", "b.txt"], &[&[1, 1, 1], &[2, 1, 1]]);
    for opts in [&["-t,", "-k2,2n"][..], &["-t,", "-k2,2n", "-s"], &["-t", ",", "-k1,1", "-u"], &["-r", "-f"]] {
        shared_same_as_xsort(&mut h, opts, &["a.txt", "b.txt"], three);
    }
    for r in 0..3 {
        std::fs::write(h.shared(&format!("t{r}")), text(8_000 + 1_000 * r, 7 + r as u64)).expect("write");
    }
    parts_same_as_xsort(&mut h, &[], "t");
    parts_same_as_xsort(&mut h, &["-t,", "-k2,2n", "-s"], "t");
}

/// Waits (20 s at most) until `done` holds, polling.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(20), "{what}: not within 20 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The `xsort-mpi` processes in host `host`'s network namespace.
fn ranks_on(h: &Hosts, host: usize) -> Vec<libc::pid_t> {
    pids_in(&h.netns(host))
        .into_iter()
        .filter(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "xsort-mpi"))
        .collect()
}

/// When a host is killed.
enum When {
    /// As soon as the sort is under way (the shared output's temp file is there).
    Started,
    /// Once every rank has written its range of the shared output: its temp file holds all of
    /// xsort's output (these bytes).
    SharedWritten(Vec<u8>),
    /// Once the victim has written its part: its unnamed file in its node-local directory holds
    /// its whole key range, the end of xsort's output of all the parts' inputs (these bytes).
    PartWritten(Vec<u8>),
}

/// One kill: the job's output, the fault that keeps it running, the host killed and when.
struct Kill {
    what: &'static str,
    output: String,
    inputs: String,
    fault: &'static str,
    victim: usize,
    when: When,
}

/// The contents of the shared output's temp file (`.out.xsort-mpi-*`), where there is one.
fn shared_temp(h: &Hosts) -> Option<Vec<u8>> {
    let name = h.shared_listing().into_iter().find(|n| n.starts_with(".out.xsort-mpi-"))?;
    std::fs::read(h.path("shared").join(name)).ok()
}

/// The contents of the unnamed (`O_TMPFILE`) file that process `pid` holds open in `dir`, where
/// it holds one.
fn unnamed_file_in(pid: libc::pid_t, dir: &str) -> Option<Vec<u8>> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.flatten();
    let fd = fds.into_iter().find(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|l| {
            let l = l.to_string_lossy();
            l.starts_with(&format!("{dir}/#")) && l.ends_with(" (deleted)")
        })
    })?;
    // The descriptor's link opens the file itself (root may: the test started the process).
    std::fs::read(fd.path()).ok()
}

#[test]
fn a_host_killed_mid_sort_leaves_the_old_targets_and_nothing_behind() {
    let _turn = one_at_a_time();
    let Some(mut h) = hosts(3) else { return };
    generate_file(Path::new(&h.shared("in")), 0, 30_000, GenOptions::default(), 1).expect("gensort");
    for r in 0..3 {
        let input = h.shared(&format!("in{r}"));
        generate_file(Path::new(&input), 30_000 * r as u128, 30_000, GenOptions::default(), 1).expect("gensort");
        h.on(r, &format!("cp {input} {}", h.local(&format!("in{r}"))));
    }
    // What the job would write (xsort's output, outside the shared directory), to see when its
    // ranks have written it.
    let opts = ["--record-size", "100", "--key-bytes", "0:10"];
    let (whole, parts) = (h.path_str("tmp/whole"), h.path_str("tmp/parts"));
    h.single(&[&opts[..], &["-o", &whole, &h.shared("in")]].concat());
    h.single(&[&opts[..], &["-o", &parts, &h.shared("in0"), &h.shared("in1"), &h.shared("in2")]].concat());
    let read_ref = |p: &str| {
        let bytes = std::fs::read(p).expect("reference");
        std::fs::remove_file(p).expect("rm reference");
        bytes
    };
    let (whole, parts) = (read_ref(&whole), read_ref(&parts));
    let cases = [
        // Rank 1 sleeps with its range of the shared output written, before the ranks agree to
        // commit; host 2 dies meanwhile (its rank has written its range too).
        Kill {
            what: "shared, host 2 at the commit",
            output: h.shared("out"),
            inputs: h.shared("in"),
            fault: "delay:1:write:4000",
            victim: 2,
            when: When::SharedWritten(whole),
        },
        // Rank 1 sleeps before its exchange; its own host dies with it.
        Kill {
            what: "shared, host 1 in the exchange",
            output: h.shared("out"),
            inputs: h.shared("in"),
            fault: "delay:1:exchange:4000",
            victim: 1,
            when: When::Started,
        },
        // Node-local parts from node-local inputs: rank 1 sleeps with its part written, host 2
        // (whose part is written, unnamed, in its own directory) dies.
        Kill {
            what: "node-local parts, host 2 at the commit",
            output: h.local("part{rank}"),
            inputs: h.local("in{rank}"),
            fault: "delay:1:write:4000",
            victim: 2,
            when: When::PartWritten(parts),
        },
    ];
    for case in cases {
        let what = case.what;
        std::fs::write(h.shared("out"), b"old").expect("write");
        std::fs::write(h.shared("s.json"), b"old stats").expect("write");
        for r in 0..3 {
            h.on(r, &format!("printf old > {}", h.local(&format!("part{r}"))));
        }
        let stats = h.shared("s.json");
        let args = [&opts[..], &["--stats-json", &stats, "-o", &case.output, &case.inputs]].concat();
        let job = h.start(&[1, 1, 1], &args, &[("XSORT_MPI_FAULT", case.fault)]);
        wait_until(&format!("{what}: a rank on each host"), || (0..3).all(|r| ranks_on(&h, r).len() == 1));
        let victim = ranks_on(&h, case.victim)[0];
        // Killed only when the sort has come as far as the case says: a host killed too early
        // would not show whether the ranks wait for each other before they commit. (A sort that
        // commits without waiting is killed as soon as the target changes: the checks below say
        // so, where waiting for the temp file would only time out.)
        let part = format!("/proc/{victim}/root{}", h.local(&format!("part{}", case.victim)));
        let shared_changed = || std::fs::read(h.shared("out")).is_ok_and(|b| b != b"old");
        let part_changed = || std::fs::read(&part).is_ok_and(|b| b != b"old");
        match &case.when {
            When::Started => wait_until(&format!("{what}: the temp file"), || shared_temp(&h).is_some() || shared_changed()),
            When::SharedWritten(all) => {
                wait_until(&format!("{what}: every range written"), || shared_temp(&h).as_ref() == Some(all) || shared_changed())
            }
            When::PartWritten(all) => wait_until(&format!("{what}: the victim's part written"), || {
                unnamed_file_in(victim, &h.path_str("local")).is_some_and(|p| !p.is_empty() && all.ends_with(&p)) || part_changed()
            }),
        }
        let killed = kill_all_in(&h.netns(case.victim));
        let at = Instant::now();
        assert!(killed >= 2, "{what}: host{} had {killed} processes (orted and a rank at least)", case.victim);
        let ran = h.wait(job);
        let after = at.elapsed();
        eprintln!(
            "{what}: {killed} processes killed on host{}; mpirun exited {:?} {:.2} s later",
            case.victim,
            ran.status.code(),
            after.as_secs_f64()
        );
        assert!(!ran.status.success(), "{what}: mpirun succeeded: {}", ran.stderr);
        assert!(after < Duration::from_secs(30), "{what}: mpirun took {after:?} to fail");
        // No process of the job is left on any host (the survivors' orted and ranks end with it).
        wait_until(&format!("{what}: the hosts' processes to end"), || h.netns.iter().all(|ns| pids_in(ns).is_empty()));
        // Every process of the job is gone: nothing can be committed any more.
        let (shared, stats) = (std::fs::read(h.shared("out")).expect("out"), std::fs::read(h.shared("s.json")).expect("stats"));
        assert!(shared == b"old", "{what}: the shared target changed (now {} bytes)", shared.len());
        assert!(stats == b"old stats", "{what}: the statistics file changed (now {} bytes)", stats.len());
        let mut want_shared = vec!["in".to_owned(), "out".into(), "s.json".into()];
        want_shared.extend((0..3).map(|r| format!("in{r}")));
        want_shared.sort();
        assert_eq!(h.shared_listing(), want_shared, "{what}: files left in the shared directory");
        for r in 0..3 {
            let part = h.read_local(r, &format!("part{r}"));
            assert!(part == b"old", "{what}: host{r}'s part changed (now {} bytes)", part.len());
            let mut left = h.local_listing(r);
            // A killed host cannot remove anything: Open MPI's session directory (`ompi.*`, in the
            // host's TMPDIR) stays there, as after any crash; nothing of xsort-mpi's may.
            if r == case.victim {
                left.retain(|n| !n.starts_with("tmp/ompi."));
                h.on(r, &format!("rm -rf {}/ompi.*", h.local("tmp")));
            }
            assert_eq!(left, [format!("in{r}"), format!("part{r}"), "tmp".into()], "{what}: left in host{r}'s node-local directory");
        }
        assert_eq!(std::fs::read_dir(h.path("tmp")).expect("tmp").count(), 0, "{what}: left in the reference's TMPDIR");
    }
}

/// The job's exchange figures from `--stats-json`: per rank, sent and received MB, seconds
/// blocked in MPI and MB/s over them, the exchange's seconds, and the job's elapsed seconds.
fn exchange_report(label: &str, stats: &Value, ran: &Ran) {
    let o = &stats["overall"];
    eprintln!(
        "{label}: mpirun {:.2} s, job {:.2} s, {} MB sent, largest wait {:.3} s, {:.0} MB/s over it, hosts {}",
        ran.elapsed.as_secs_f64(),
        o["elapsed_s"].as_f64().unwrap_or(0.0),
        o["exchange_sent_bytes"].as_u64().unwrap_or(0) / 1_000_000,
        o["exchange_wait_s_max"].as_f64().unwrap_or(0.0),
        o["exchange_mb_per_s"].as_f64().unwrap_or(0.0),
        o["hosts"],
    );
    for r in stats["per_rank"].as_array().expect("per_rank") {
        let x = &r["exchange"];
        let sent = x["sent_bytes"].as_u64().unwrap_or(0) as f64 / 1e6;
        let received = x["received_bytes"].as_u64().unwrap_or(0) as f64 / 1e6;
        let elapsed = x["elapsed_s"].as_f64().unwrap_or(0.0);
        eprintln!(
            "  rank {} on {}: sent {sent:.1} MB, received {received:.1} MB; blocked {:.3} s ({:.0} MB/s over it); exchange {elapsed:.3} s ({:.0} MB/s over it)",
            r["rank"],
            r["host"].as_str().unwrap_or("?"),
            x["wait_s"].as_f64().unwrap_or(0.0),
            x["mb_per_s"].as_f64().unwrap_or(0.0),
            if elapsed > 0.0 { (sent + received) / elapsed } else { 0.0 },
        );
    }
}

/// The same 100 MB job on two ranks, once on two hosts over TCP and once on one host over shared
/// memory: the exchange's figures of each are printed (not asserted; they depend on the machine).
#[test]
fn exchange_rate_over_tcp_against_shared_memory() {
    let _turn = one_at_a_time();
    let Some(mut h) = hosts(2) else { return };
    let records: u64 = std::env::var("XSORT_HOSTS_RATE_RECORDS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    generate_file(Path::new(&h.shared("in")), 0, records, GenOptions::default(), 2).expect("gensort");
    let args = |out: &str, stats: &str| -> Vec<String> {
        ["--record-size", "100", "--key-bytes", "0:10", "--stats-json", &h.shared(stats), "-o", &h.shared(out), &h.shared("in")]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let (tcp_args, shm_args) = (args("tcp", "tcp.json"), args("shm", "shm.json"));
    let (tcp_args, shm_args): (Vec<&str>, Vec<&str>) =
        (tcp_args.iter().map(String::as_str).collect(), shm_args.iter().map(String::as_str).collect());
    let read = |path: String| -> Value { serde_json::from_slice(&std::fs::read(path).expect("stats")).expect("stats JSON") };
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load = load.split_whitespace().take(3).collect::<Vec<_>>().join(" ");
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    eprintln!("exchange of {} MB of records (--record-size 100 --key-bytes 0:10), 2 ranks; {cores} cores, load {load}", records / 10_000);
    // Three of each, alternating, so that a passing load on the machine shows as such.
    for run in 1..=3 {
        let job = h.start(&[1, 1], &tcp_args, &[]);
        let tcp = h.wait(job);
        assert!(tcp.status.success(), "over TCP: {}", tcp.stderr);
        exchange_report(&format!("run {run}: TCP between two namespace hosts (veth, bridge)"), &read(h.shared("tcp.json")), &tcp);
        let job = h.start_one_host(2, &shm_args);
        let shm = h.wait(job);
        assert!(shm.status.success(), "shared memory: {}", shm.stderr);
        exchange_report(&format!("run {run}: shared memory on one host"), &read(h.shared("shm.json")), &shm);
    }
    assert!(std::fs::read(h.shared("tcp")).expect("tcp") == std::fs::read(h.shared("shm")).expect("shm"), "the two outputs differ");
}
