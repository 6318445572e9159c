//! Surviving a mapped input that shrinks.
//!
//! Reading a page of a file mapping that lies wholly past the file's end raises SIGBUS, which kills
//! the process: a one-pass sort of a mapped input that is truncated meanwhile (`truncate -s 0 in`
//! during `xsort -o out in`) would die with "Bus error" and leave its partial output behind. So
//! every mapping is registered here, in a fixed table of atomics that a signal handler may read,
//! and a SIGBUS handler (installed with the first mapping) that finds the faulting address in a
//! registered mapping maps anonymous zero pages over the rest of it (mmap is a plain system call,
//! safe in a handler), marks the mapping as shrunk and returns: the faulting read is retried and
//! sees zeros, the sort goes on, and its owner checks the mark (and the file's size) before the
//! output is committed, so the zeros never reach a target: the sort fails with "file shrank while
//! being read" instead. Any other SIGBUS gets the action that was there before (Rust's runtime
//! has one that reports stack overflows) or, when sent by another process, the default action.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Mappings that may be live at once (a sort maps one input at a time; tests map a few).
const SLOTS: usize = 64;

const FREE: u8 = 0;
const CLAIMED: u8 = 1;
const LIVE: u8 = 2;

/// One registered mapping.
struct Slot {
    state: AtomicU8,
    start: AtomicUsize,
    len: AtomicUsize,
    shrank: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)] // only to initialise the array below
const EMPTY: Slot =
    Slot { state: AtomicU8::new(FREE), start: AtomicUsize::new(0), len: AtomicUsize::new(0), shrank: AtomicBool::new(false) };
static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];

/// The page size, read when the handler is installed (sysconf is not for signal handlers).
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The action SIGBUS had before ours, and whether ours is installed (Err: installation failed).
static PREVIOUS: OnceLock<Result<libc::sigaction, ()>> = OnceLock::new();

/// A registered mapping; dropping it unregisters it (before the mapping is unmapped).
pub struct Registration {
    slot: usize,
}

impl Registration {
    /// Whether a read past the file's end was caught in this mapping (its rest now reads as zeros).
    pub fn shrank(&self) -> bool {
        TABLE[self.slot].shrank.load(Ordering::Acquire)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        TABLE[self.slot].state.store(FREE, Ordering::Release);
    }
}

/// Registers the mapping `[start, start + len)`, installing the handler first if needed. None when
/// the handler cannot be installed or the table is full: the caller must not map, but read.
pub fn register(start: usize, len: usize) -> Option<Registration> {
    PREVIOUS.get_or_init(install).as_ref().ok()?;
    for (i, slot) in TABLE.iter().enumerate() {
        if slot.state.compare_exchange(FREE, CLAIMED, Ordering::Acquire, Ordering::Relaxed).is_ok() {
            slot.start.store(start, Ordering::Relaxed);
            slot.len.store(len, Ordering::Relaxed);
            slot.shrank.store(false, Ordering::Relaxed);
            slot.state.store(LIVE, Ordering::Release);
            return Some(Registration { slot: i });
        }
    }
    None
}

fn install() -> Result<libc::sigaction, ()> {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 {
        PAGE.store(page as usize, Ordering::Relaxed);
    }
    // SAFETY: sigaction is plain data; the new action names a handler of the SA_SIGINFO shape, and
    // the old one is written into `old`. The handler runs on the alternate stack where the thread
    // has one (Rust's threads do) and is async-signal-safe (atomics, mmap, sigaction, raise).
    unsafe {
        let mut new: libc::sigaction = std::mem::zeroed();
        new.sa_sigaction = on_sigbus as Handler as usize;
        new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut new.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGBUS, &new, &mut old) != 0 {
            return Err(());
        }
        Ok(old)
    }
}

/// The shape of an SA_SIGINFO handler.
type Handler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

/// The SIGBUS handler; see the module documentation.
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    // si_code > 0: raised by the kernel for a fault at si_addr (not sent with kill).
    if code > 0 && zero_the_rest(addr) {
        return;
    }
    // Not ours: the previous action takes over. A fault is retried on return and meets it; a
    // signal sent by another process is raised again with the default action.
    // SAFETY: sigaction, signal and raise are async-signal-safe; PREVIOUS was set before the
    // handler was installed.
    unsafe {
        match PREVIOUS.get() {
            Some(Ok(old)) if code > 0 => {
                libc::sigaction(sig, old, std::ptr::null_mut());
            }
            _ => {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
        }
    }
}

/// If `addr` lies in a registered mapping, maps zero pages from its page to the mapping's end, marks
/// the mapping as shrunk and returns true.
fn zero_the_rest(addr: usize) -> bool {
    let page = PAGE.load(Ordering::Relaxed);
    for slot in &TABLE {
        if slot.state.load(Ordering::Acquire) != LIVE {
            continue;
        }
        let (start, len) = (slot.start.load(Ordering::Relaxed), slot.len.load(Ordering::Relaxed));
        if addr < start || addr - start >= len {
            continue;
        }
        let from = addr & !(page - 1);
        let end = (start + len).div_ceil(page) * page;
        // SAFETY: [from, end) lies inside the registered mapping, which stays mapped while it is
        // registered; replacing its pages with private anonymous ones changes only what reads of it
        // see (zeros), and the owner unmaps the whole range as before.
        let p = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                end - from,
                libc::PROT_READ,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return false;
        }
        slot.shrank.store(true, Ordering::Release);
        return true;
    }
    false
}
