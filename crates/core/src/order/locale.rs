//! The user's locale, as GNU sort 9.1 uses it: the collation of text (`LC_COLLATE`), the decimal
//! point and thousands separator of numbers (`LC_NUMERIC`, for `-n -h -g`) and the month names of
//! `-M` (`LC_TIME`).
//!
//! A [`Locale`] holds a glibc `locale_t` built with `newlocale`, never the process's global locale,
//! so sorts in different locales can run side by side in one process. Where `LC_COLLATE` names a
//! real locale, text compares as GNU's `xmemcoll0` does: `strcoll` on NUL-terminated copies, one
//! NUL-separated part after another. So that only ties reach `strcoll`, [`Locale::xfrm_prefix`]
//! gives the first bytes of the primary weights of `strxfrm`'s transform, whose byte order never
//! contradicts `strcoll`'s (the whole transforms sometimes do: see [`Locale::primary_weights`]).
//!
//! `C`, `POSIX` and `C.<codeset>` (whose collation is code point order, the same as UTF-8's byte
//! order) collate as bytes, and xsort compares them as bytes.
//!
//! GNU reads `-d -f -i -M` from single-byte tables built from the locale's `LC_CTYPE` (its
//! `inittables`): so does xsort ([`ByteClasses`]). In the C locale and UTF-8 ones they are the C
//! locale's; an 8-bit locale (`fr_FR.ISO-8859-1`) has letters and upper cases beyond ASCII, and
//! tr_TR upper-cases 'i' as itself. Blanks (`-b`, fields) are space and tab in every glibc locale;
//! one with other blank bytes is refused.

use std::cmp::Ordering;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::sync::Arc;

use super::{ByteClasses, BLANK, C_CLASSES};
use crate::error::SortError;

extern "C" {
    fn wcwidth(c: libc::wchar_t) -> c_int;
    fn isblank_l(c: c_int, loc: libc::locale_t) -> c_int;
    fn isalnum_l(c: c_int, loc: libc::locale_t) -> c_int;
    fn isprint_l(c: c_int, loc: libc::locale_t) -> c_int;
    fn iscntrl_l(c: c_int, loc: libc::locale_t) -> c_int;
    fn toupper_l(c: c_int, loc: libc::locale_t) -> c_int;
    fn strcoll_l(a: *const c_char, b: *const c_char, loc: libc::locale_t) -> c_int;
    fn strxfrm_l(dest: *mut c_char, src: *const c_char, n: usize, loc: libc::locale_t) -> usize;
}

/// A glibc locale object, freed when dropped.
#[derive(Debug)]
struct Handle(libc::locale_t);

// SAFETY: a locale_t is not changed after newlocale returns it; the `*_l` functions only read it,
// which glibc allows from any thread.
unsafe impl Send for Handle {}
// SAFETY: as above: shared use is read-only.
unsafe impl Sync for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: the handle came from newlocale and is freed once, here.
        unsafe { libc::freelocale(self.0) }
    }
}

/// How numbers are written in the locale, as GNU sort reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Numbers {
    /// The decimal point: the locale's when it is one byte, else '.'.
    pub(crate) decimal: u8,
    /// The byte strnumcmp (`-n`, `-h`) skips among integer digits, as a byte value it is compared
    /// with: the locale's thousands separator when it is one ASCII byte; 0x80 when the locale has
    /// none or several bytes (GNU passes CHAR_MAX + 1, which strnumcmp, reading bytes as unsigned,
    /// matches against byte 0x80); [`NO_BYTE`] for a separator byte of 0x80 or more, which GNU
    /// passes sign-extended, so that no byte matches it (the 8-bit locales' no-break space).
    pub(crate) group: u16,
    /// The thousands separator `-h` skips when it looks for the unit (none where GNU's is CHAR_MAX + 1,
    /// which no signed char equals).
    pub(crate) unit_group: Option<u8>,
    /// The locale's thousands separator is several bytes, which GNU ignores (and `--debug` says).
    pub(crate) group_ignored: bool,
}

/// A [`Numbers::group`] that no byte matches.
pub(crate) const NO_BYTE: u16 = 0x100;

impl Numbers {
    /// The C locale's.
    pub(crate) const C: Numbers = Numbers { decimal: b'.', group: 0x80, unit_group: None, group_ignored: false };
}

/// The category names glibc's `setlocale(LC_ALL, "")` reads, with their masks.
const CATEGORIES: [(&str, c_int); 12] = [
    ("LC_CTYPE", libc::LC_CTYPE_MASK),
    ("LC_NUMERIC", libc::LC_NUMERIC_MASK),
    ("LC_TIME", libc::LC_TIME_MASK),
    ("LC_COLLATE", libc::LC_COLLATE_MASK),
    ("LC_MONETARY", libc::LC_MONETARY_MASK),
    ("LC_MESSAGES", libc::LC_MESSAGES_MASK),
    ("LC_PAPER", libc::LC_PAPER_MASK),
    ("LC_NAME", libc::LC_NAME_MASK),
    ("LC_ADDRESS", libc::LC_ADDRESS_MASK),
    ("LC_TELEPHONE", libc::LC_TELEPHONE_MASK),
    ("LC_MEASUREMENT", libc::LC_MEASUREMENT_MASK),
    ("LC_IDENTIFICATION", libc::LC_IDENTIFICATION_MASK),
];

/// A locale for ordering text lines (see the module documentation). The default is the C locale:
/// bytes, '.' and English month names. Cloning is cheap.
#[derive(Clone, Debug, Default)]
pub struct Locale {
    inner: Option<Arc<Inner>>,
    /// The environment named a locale that is not installed (so this is the C locale).
    failed: bool,
}

#[derive(Debug)]
struct Inner {
    /// The collation locale's name, as `setlocale(LC_COLLATE, NULL)` would give it.
    collate_name: String,
    /// Whether text compares with `strcoll` (`LC_COLLATE` is not C, POSIX or C.<codeset>).
    collates: bool,
    numbers: Numbers,
    /// `-M`'s names (upper-cased bytewise, blanks dropped) with their month numbers, sorted by name.
    months: Vec<(Vec<u8>, u8)>,
    /// The character set is UTF-8.
    utf8: bool,
    /// LC_CTYPE's single-byte tables.
    classes: &'static ByteClasses,
    handle: Handle,
}

/// Whether glibc's collation for `name` is byte order.
fn is_c_name(name: &str) -> bool {
    name == "C" || name == "POSIX" || name.starts_with("C.")
}

impl Locale {
    /// The C locale: bytes, '.' and English month names.
    pub const C: Locale = Locale { inner: None, failed: false };

    /// The locale `name` for every category, as `LC_ALL=name` gives it. A name that is not an
    /// installed locale is an error.
    pub fn named(name: &str) -> Result<Locale, SortError> {
        if name.is_empty() {
            return Err(SortError::BadOption("a locale's name is empty (Locale::from_env reads the environment's)".into()));
        }
        Locale::build(&|_| name.to_owned())?
            .ok_or_else(|| SortError::BadOption(format!("locale '{name}' is not installed here ('locale -a' lists those that are)")))
    }

    /// The locale the environment asks for, each category from the first of `LC_ALL`, its own
    /// variable (`LC_COLLATE`, ...) and `LANG` that is set and not empty, as glibc's
    /// `setlocale(LC_ALL, "")` reads it. `env` gives a variable's value. When a category names a
    /// locale that is not installed, setlocale fails and GNU sort stays in the C locale: so does
    /// this, and [`Self::failed`] says so. An installed locale xsort cannot follow exactly (one
    /// with blank bytes beyond space and tab, which glibc has not) is an error.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<Locale, SortError> {
        let pick = |category: &str| {
            ["LC_ALL", category, "LANG"].into_iter().find_map(|var| env(var).filter(|v| !v.is_empty())).unwrap_or_else(|| "C".to_owned())
        };
        Ok(Locale::build(&pick)?.unwrap_or(Locale { inner: None, failed: true }))
    }

    /// The locale whose categories `name_of` names (by variable name, as "LC_COLLATE"); None when
    /// one of them is not installed.
    fn build(name_of: &dyn Fn(&str) -> String) -> Result<Option<Locale>, SortError> {
        let names: Vec<String> = CATEGORIES.iter().map(|(var, _)| name_of(var)).collect();
        if names.iter().all(|n| n == "C" || n == "POSIX") {
            return Ok(Some(Locale::C));
        }
        let mut loc: libc::locale_t = std::ptr::null_mut();
        for ((_, mask), name) in CATEGORIES.iter().zip(&names) {
            let Ok(cname) = CString::new(name.as_str()) else { return Ok(None) };
            // SAFETY: cname is NUL-terminated; `loc` is null or a locale_t from newlocale, which
            // newlocale takes over (frees or reuses), on success and on failure alike.
            let next = unsafe { libc::newlocale(*mask, cname.as_ptr(), loc) };
            if next.is_null() {
                if !loc.is_null() {
                    // SAFETY: on failure newlocale leaves `loc` to its caller.
                    unsafe { libc::freelocale(loc) };
                }
                return Ok(None);
            }
            loc = next;
        }
        let handle = Handle(loc);
        let classes = byte_classes(&handle, &names[0])?;
        let collate_name = names[3].clone();
        // SAFETY: `handle` is a live locale; nl_langinfo_l returns a NUL-terminated string.
        let codeset = unsafe { CStr::from_ptr(libc::nl_langinfo_l(libc::CODESET, handle.0)) };
        let inner = Inner {
            collates: !is_c_name(&collate_name),
            collate_name,
            numbers: numbers(&handle),
            months: months(&handle, classes),
            utf8: codeset.to_bytes() == b"UTF-8",
            classes,
            handle,
        };
        Ok(Some(Locale { inner: Some(Arc::new(inner)), failed: false }))
    }

    /// Whether the environment named a locale that is not installed, so that the sort uses the C
    /// locale (GNU's `--debug` says "failed to set locale").
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// The locale's single-byte tables (`-d`, `-i`, `-f`).
    pub(crate) fn byte_classes(&self) -> &'static ByteClasses {
        self.inner.as_ref().map_or(&C_CLASSES, |i| i.classes)
    }

    /// Whether GNU sort calls this locale's collation "hard" (any but C and POSIX, C.UTF-8 too,
    /// whose order is bytes'): `--debug` then names the locale's sorting rules.
    pub(crate) fn hard_collation(&self) -> bool {
        self.inner.as_ref().is_some_and(|i| i.collate_name != "C" && i.collate_name != "POSIX")
    }

    /// `s` quoted as GNU's messages quote in this locale: ‘s’ in a UTF-8 locale, 's' otherwise.
    pub(crate) fn quote(&self, s: &[u8]) -> String {
        if self.inner.as_ref().is_some_and(|i| i.utf8) {
            format!("\u{2018}{}\u{2019}", String::from_utf8_lossy(s))
        } else {
            super::keydef::quote(s)
        }
    }

    /// GNU's debug_width: the columns `s` takes (gnulib's mbsnwidth), plus one per tab. In the C
    /// locale (and any single-byte one) printable bytes and bytes >= 0x80 take one, control bytes
    /// none; in a UTF-8 locale each character takes its `wcwidth`, an invalid byte one, and an
    /// incomplete character at the end one.
    pub(crate) fn debug_width(&self, s: &[u8]) -> usize {
        let tabs = s.iter().filter(|&&c| c == b'\t').count();
        let Some(inner) = self.inner.as_ref().filter(|i| i.utf8) else {
            // A byte is a character: printable ones take one column, control ones none, others one.
            let nonprinting = &self.byte_classes().nonprinting;
            let control = |c: u8| match &self.inner {
                // SAFETY: `i.handle` is a live locale and `c` is in the range iscntrl takes.
                Some(i) => unsafe { iscntrl_l(c_int::from(c), i.handle.0) != 0 },
                None => c < 0x20 || c == 0x7f,
            };
            return tabs + s.iter().filter(|&&c| !nonprinting[c as usize] || !control(c)).count();
        };
        // SAFETY: `inner.handle` is a live locale, made this thread's for the wcwidth calls and
        // replaced by the thread's previous locale before returning.
        let previous = unsafe { libc::uselocale(inner.handle.0) };
        let mut width = 0;
        let mut chunks = s.utf8_chunks().peekable();
        while let Some(chunk) = chunks.next() {
            for c in chunk.valid().chars() {
                // SAFETY: wcwidth only reads the thread's locale.
                let w = unsafe { wcwidth(c as libc::wchar_t) };
                // An unprintable character takes one column unless it is a control character.
                width += if w >= 0 { w as usize } else { usize::from(!c.is_control()) };
            }
            // Each invalid byte takes one; a character cut off by the end takes one in all.
            let invalid = chunk.invalid();
            let cut_off = chunks.peek().is_none() && std::str::from_utf8(invalid).is_err_and(|e| e.error_len().is_none());
            width += if cut_off { 1 } else { invalid.len() };
        }
        // SAFETY: restores the locale this thread had.
        unsafe { libc::uselocale(previous) };
        width + tabs
    }

    /// The collation locale's name, `C` for the C locale.
    pub fn name(&self) -> &str {
        self.inner.as_ref().map_or("C", |i| &i.collate_name)
    }

    /// Whether text compares by the locale's collation rather than by bytes.
    pub fn collates(&self) -> bool {
        self.inner.as_ref().is_some_and(|i| i.collates)
    }

    /// Whether the locale gives exactly the C locale's order for every key.
    pub fn is_c(&self) -> bool {
        !self.collates() && self.numbers() == Numbers::C && self.inner.as_ref().is_none_or(|i| i.months == *c_months())
    }

    pub(crate) fn numbers(&self) -> Numbers {
        self.inner.as_ref().map_or(Numbers::C, |i| i.numbers)
    }

    /// The locale object for C shims (`strtold_l`); null for the C locale.
    pub(crate) fn raw(&self) -> *mut std::ffi::c_void {
        self.inner.as_ref().map_or(std::ptr::null_mut(), |i| i.handle.0.cast())
    }

    /// GNU's getmonth: the month (1..=12) whose name starts `s` after blanks, compared with `s`'s
    /// bytes upper-cased, found by GNU's binary search over the sorted names; 0 when none. Also
    /// the index just past the name, if one matched. The text ends at a NUL as GNU's C string does.
    pub(crate) fn month_at(&self, s: &[u8]) -> (u8, usize) {
        month_in(self.inner.as_ref().map_or(c_months(), |i| &i.months), &self.byte_classes().toupper, s)
    }

    /// GNU's xmemcoll0 on two keys, with keycompare's rule for empty ones: an empty key sorts
    /// first; equal bytes are equal; else `strcoll`, one NUL-separated part after another.
    pub(crate) fn collate(&self, a: &[u8], b: &[u8]) -> Ordering {
        if let Some(o) = decided_without_strcoll(a, b) {
            return o;
        }
        let Some(inner) = &self.inner else { return a.cmp(b) };
        SCRATCH.with(|cell| {
            let mut bufs = cell.borrow_mut();
            let (ca, cb) = &mut *bufs;
            terminated(a, ca);
            terminated(b, cb);
            strcoll_parts(ca, cb, inner.handle.0)
        })
    }

    /// [`Self::collate`] of the keys after `-d`/`-i` dropping and `-f` folding.
    pub(crate) fn collate_transformed(&self, ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, a: &[u8], b: &[u8]) -> Ordering {
        SCRATCH.with(|cell| {
            let mut bufs = cell.borrow_mut();
            let (ta, tb) = &mut *bufs;
            super::transform_into(ignore, fold, a, ta);
            super::transform_into(ignore, fold, b, tb);
            if let Some(o) = decided_without_strcoll(ta, tb) {
                return o;
            }
            let Some(inner) = &self.inner else { return ta.cmp(&tb) };
            ta.push(0);
            tb.push(0);
            strcoll_parts(ta, tb, inner.handle.0)
        })
    }

    /// The collation transform of `s` (after `-d`/`-i`/`-f` when given): `strxfrm` of each
    /// NUL-separated part, each followed by a NUL, as GNU's `-R` hashes it: keys that collate equal
    /// transform equally (their byte order is mostly, not always, the collation's).
    pub(crate) fn xfrm_into(&self, ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, s: &[u8], out: &mut Vec<u8>) {
        out.clear();
        let Some(inner) = &self.inner else {
            super::transform_into(ignore, fold, s, out);
            return;
        };
        SCRATCH.with(|cell| {
            let mut bufs = cell.borrow_mut();
            let (src, _) = &mut *bufs;
            super::transform_into(ignore, fold, s, src);
            src.push(0);
            let mut rest: &[u8] = src;
            while !rest.is_empty() {
                let part_len = memchr::memchr(0, rest).unwrap_or(rest.len());
                xfrm_append(&rest[..=part_len], inner.handle.0, out);
                out.push(0);
                rest = &rest[part_len + 1..];
            }
        });
    }

    /// The first 12 bytes of [`Self::primary_weights`] of `s`, zero-padded, big-endian in the top
    /// 96 bits: a smaller prefix means a key that collates first, and keys that collate equal have
    /// equal prefixes.
    pub(crate) fn xfrm_prefix(&self, ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, s: &[u8]) -> u128 {
        let Some(inner) = &self.inner else { return 0 };
        XFRM.with(|cell| {
            let mut src = cell.borrow_mut();
            first_part(ignore, fold, s, &mut src);
            if src.len() <= LONGEST_TRANSFORMED {
                return PRIMARY.with(|cell| {
                    let mut all = cell.borrow_mut();
                    all.clear();
                    xfrm_append(&src, inner.handle.0, &mut all);
                    super::prefix::bytes(primary(&all))
                });
            }
            // A long key's whole transform would take ten times its length. glibc writes the
            // weights of each collating element in order while they fit and none after the first
            // that does not, leaving the rest of the buffer as it was (zero): a buffer far longer
            // than one element's weights holds the transform's first bytes.
            let mut out = [0u8; PREFIX_ROOM];
            // SAFETY: `src` is NUL-terminated and `out` has PREFIX_ROOM writable bytes.
            unsafe { strxfrm_l(out.as_mut_ptr().cast(), src.as_ptr().cast(), PREFIX_ROOM, inner.handle.0) };
            super::prefix::bytes(primary(&out))
        })
    }

    /// Appends the primary collation weights of `s`'s first NUL-separated part (after `-d`/`-i`/`-f`
    /// when given) to `out`: their byte order never contradicts the collation (keys with smaller
    /// weights collate first; keys that collate equal have equal weights). Nothing in the C locale.
    /// False, with nothing appended, for a key longer than [`LONGEST_TRANSFORMED`] bytes, whose
    /// transform would take ten times its length.
    ///
    /// glibc's `strxfrm` writes the weights of each level in turn, separated by byte 1. Only the
    /// first level is kept: glibc's `strcoll` and `strxfrm` can disagree on later levels (a string
    /// that starts with a combining accent), never on the first, which `strcoll` compares first.
    pub(crate) fn primary_weights(&self, ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, s: &[u8], out: &mut Vec<u8>) -> bool {
        let Some(inner) = &self.inner else { return true };
        XFRM.with(|cell| {
            let mut src = cell.borrow_mut();
            first_part(ignore, fold, s, &mut src);
            if src.len() > LONGEST_TRANSFORMED {
                return false;
            }
            let start = out.len();
            xfrm_append(&src, inner.handle.0, out);
            let weights = primary(&out[start..]).len();
            out.truncate(start + weights);
            true
        })
    }
}

/// Keys longer than this many bytes get no full transform (see [`Locale::primary_weights`]).
pub(crate) const LONGEST_TRANSFORMED: usize = 4096;

/// The buffer a long key's prefix is transformed into: the 12 bytes a prefix holds, and room for
/// the weights of any collating element that starts in them (a ligature's are a few of its
/// letters': tens of bytes).
const PREFIX_ROOM: usize = 4096;

/// The first level of a (possibly cut-off) `strxfrm` transform: up to the level separator, byte
/// 1, or the first byte a cut-off transform left unwritten (zero); weights hold neither byte.
fn primary(transform: &[u8]) -> &[u8] {
    &transform[..transform.iter().position(|&b| b <= 1).unwrap_or(transform.len())]
}

/// What decides a collation before `strcoll` is asked, as gnulib's memcoll0 and GNU's keycompare
/// decide it: an empty key first, equal bytes equal.
fn decided_without_strcoll(a: &[u8], b: &[u8]) -> Option<Ordering> {
    if a.is_empty() || b.is_empty() {
        return Some((!a.is_empty()).cmp(&!b.is_empty()));
    }
    (a == b).then_some(Ordering::Equal)
}

/// The first NUL-separated part of `s` after `-d`/`-i`/`-f`, NUL-terminated, into `src`.
fn first_part(ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, s: &[u8], src: &mut Vec<u8>) {
    super::transform_into(ignore, fold, s, src);
    let first = memchr::memchr(0, src).unwrap_or(src.len());
    src.truncate(first);
    src.push(0);
}

thread_local! {
    /// NUL-terminated copies of the two keys a comparison collates.
    static SCRATCH: std::cell::RefCell<(Vec<u8>, Vec<u8>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    /// The key a transform is made of, NUL-terminated.
    static XFRM: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// The primary weights a prefix is taken from.
    static PRIMARY: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `s` with a NUL after it, into `buf`.
fn terminated(s: &[u8], buf: &mut Vec<u8>) {
    buf.clear();
    buf.extend_from_slice(s);
    buf.push(0);
}

/// gnulib's strcoll_loop on two NUL-terminated byte strings that may hold NULs inside: `strcoll`
/// part by part; the string whose parts run out first sorts first.
fn strcoll_parts(mut a: &[u8], mut b: &[u8], loc: libc::locale_t) -> Ordering {
    loop {
        // SAFETY: `a` and `b` each end with a NUL (every part does), and `loc` is a live locale.
        let d = unsafe { strcoll_l(a.as_ptr().cast(), b.as_ptr().cast(), loc) };
        if d != 0 {
            return d.cmp(&0);
        }
        let part = |s: &[u8]| memchr::memchr(0, s).map_or(s.len(), |n| n + 1);
        a = &a[part(a)..];
        b = &b[part(b)..];
        if a.is_empty() || b.is_empty() {
            return (!a.is_empty()).cmp(&!b.is_empty());
        }
    }
}

/// Appends `strxfrm` of the NUL-terminated `part` (no NUL inside) to `out`.
fn xfrm_append(part: &[u8], loc: libc::locale_t, out: &mut Vec<u8>) {
    let start = out.len();
    // glibc writes about 8 bytes a character (four levels of weights): room for that at once
    // spares most strings a second call.
    let mut room = 10 * part.len() + 32;
    loop {
        out.resize(start + room, 0);
        // SAFETY: `part` is NUL-terminated and `out` has `room` writable bytes after `start`.
        let n = unsafe { strxfrm_l(out[start..].as_mut_ptr().cast(), part.as_ptr().cast(), room, loc) };
        if n < room {
            out.truncate(start + n);
            return;
        }
        room = n + 1;
    }
}

/// GNU's single-byte tables of the locale (its inittables), shared by every locale that has the
/// same; an error when the locale has blank bytes beyond space and tab (no glibc locale has), which
/// xsort's field splitting does not follow.
fn byte_classes(handle: &Handle, ctype_name: &str) -> Result<&'static ByteClasses, SortError> {
    let loc = handle.0;
    let mut classes = ByteClasses { nondictionary: [false; 256], nonprinting: [false; 256], toupper: [0; 256] };
    for c in 0..256 {
        // SAFETY: `loc` is a live locale and `c` is in the range the is* and toupper functions take.
        let (blank, alnum, print, upper) = unsafe {
            (isblank_l(c, loc) != 0 || c == c_int::from(b'\n'), isalnum_l(c, loc) != 0, isprint_l(c, loc) != 0, toupper_l(c, loc))
        };
        if blank != BLANK[c as usize] {
            return Err(SortError::BadOption(format!(
                "the locale '{ctype_name}' has blank characters other than space and tab among its single bytes, which xsort does not follow: set another locale, or --locale-order=bytes"
            )));
        }
        classes.nondictionary[c as usize] = !alnum && !blank;
        classes.nonprinting[c as usize] = !print;
        classes.toupper[c as usize] = u8::try_from(upper).unwrap_or(c as u8);
    }
    if classes == C_CLASSES {
        return Ok(&C_CLASSES);
    }
    // Each distinct table is made once and lives as long as the process: sorts keep references.
    static MADE: std::sync::Mutex<Vec<&'static ByteClasses>> = std::sync::Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = made.iter().find(|m| ***m == classes) {
        return Ok(found);
    }
    let leaked: &'static ByteClasses = Box::leak(Box::new(classes));
    made.push(leaked);
    Ok(leaked)
}

/// The locale's number format, as GNU sort's main() reads it from localeconv().
fn numbers(handle: &Handle) -> Numbers {
    let item = |item| {
        // SAFETY: `handle` is a live locale; nl_langinfo_l returns a NUL-terminated string it owns.
        unsafe { CStr::from_ptr(libc::nl_langinfo_l(item, handle.0)) }.to_bytes().to_vec()
    };
    let (point, sep) = (item(libc::RADIXCHAR), item(libc::THOUSEP));
    let single = |s: &[u8]| (s.len() == 1).then(|| s[0]);
    Numbers {
        decimal: single(&point).unwrap_or(b'.'),
        group: single(&sep).map_or(0x80, |b| if b < 0x80 { u16::from(b) } else { NO_BYTE }),
        unit_group: single(&sep),
        group_ignored: sep.len() > 1,
    }
}

/// The locale's abbreviated month names as GNU's inittables keeps them: blanks dropped, each byte
/// upper-cased as the locale does, sorted by name.
fn months(handle: &Handle, classes: &ByteClasses) -> Vec<(Vec<u8>, u8)> {
    let mut table: Vec<(Vec<u8>, u8)> = (0..12)
        .map(|m| {
            // SAFETY: `handle` is a live locale; nl_langinfo_l returns a NUL-terminated string.
            let name = unsafe { CStr::from_ptr(libc::nl_langinfo_l(libc::ABMON_1 + m, handle.0)) }.to_bytes();
            let name = name.iter().filter(|&&c| !(c == b' ' || c == b'\t')).map(|&c| classes.toupper[c as usize]).collect();
            (name, m as u8 + 1)
        })
        .collect();
    table.sort();
    table
}

/// The C locale's month table.
fn c_months() -> &'static [(Vec<u8>, u8)] {
    static TABLE: std::sync::OnceLock<Vec<(Vec<u8>, u8)>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        const NAMES: [&[u8; 3]; 12] = [b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV", b"DEC"];
        let mut table: Vec<(Vec<u8>, u8)> = NAMES.iter().zip(1..).map(|(n, m)| (n.to_vec(), m)).collect();
        table.sort();
        table
    })
}

/// GNU's getmonth over `table`, upper-casing by `toupper` (see [`Locale::month_at`]).
fn month_in(table: &[(Vec<u8>, u8)], toupper: &[u8; 256], s: &[u8]) -> (u8, usize) {
    let skip = s.iter().position(|&c| !BLANK[c as usize]).unwrap_or(s.len());
    let at = |i: usize| s.get(skip + i).copied().unwrap_or(0);
    let (mut lo, mut hi) = (0, table.len());
    while lo < hi {
        let ix = (lo + hi) / 2;
        let (name, month) = &table[ix];
        let mut i = 0;
        loop {
            let Some(&n) = name.get(i) else { return (*month, skip + i) };
            let m = toupper[at(i) as usize];
            if m < n {
                hi = ix;
                break;
            }
            if m > n {
                lo = ix + 1;
                break;
            }
            i += 1;
        }
    }
    (0, skip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    fn installed(name: &str) -> Locale {
        Locale::named(name).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_c_locale_orders_bytes_and_english_months() {
        let c = Locale::C;
        assert!(!c.collates() && c.is_c() && c.name() == "C");
        assert_eq!(c.collate(b"B", b"a"), Less);
        assert_eq!(c.collate(b"", b"\0"), Less);
        for (s, m) in [(&b"jan"[..], 1), (b"  DeCember", 12), (b"\tfeb", 2), (b"ja", 0), (b"xjan", 0), (b"", 0), (b"ja\0n", 0)] {
            assert_eq!(c.month_at(s).0, m, "{s:?}");
        }
        assert_eq!(c.month_at(b" mar x"), (3, 4));
        assert_eq!(c.debug_width("a\té\x01".as_bytes()), 4);
    }

    #[test]
    fn names_resolve_as_setlocale_does() {
        let err = Locale::named("xx_XX.UTF-8").unwrap_err().to_string();
        assert!(err.contains("'xx_XX.UTF-8' is not installed"), "{err}");
        let env = |pairs: &'static [(&'static str, &'static str)]| move |v: &str| pairs.iter().find(|p| p.0 == v).map(|p| p.1.to_owned());
        let missing = Locale::from_env(env(&[("LANG", "xx_XX.UTF-8")])).unwrap();
        assert!(missing.failed() && missing.is_c());
        let c = Locale::from_env(env(&[("LANG", ""), ("LC_ALL", "POSIX")])).unwrap();
        assert!(!c.failed() && c.is_c());
        let utf8 = Locale::from_env(env(&[("LC_ALL", "C.UTF-8"), ("LANG", "xx")])).unwrap();
        assert!(!utf8.failed() && utf8.is_c() && utf8.hard_collation() && !utf8.collates());
        assert_eq!(utf8.quote(b"."), "\u{2018}.\u{2019}");
    }

    #[test]
    fn collation_numbers_and_months_follow_the_locale() {
        if !xsort_testkit::locales(&xsort_testkit::TEST_LOCALES) {
            return;
        }
        let en = installed("en_US.UTF-8");
        assert!(en.collates() && !en.is_c());
        let ordered = |loc: &Locale, words: &[&str]| {
            for w in words.windows(2) {
                assert_eq!(loc.collate(w[0].as_bytes(), w[1].as_bytes()), Less, "{} {w:?}", loc.name());
                assert_eq!(loc.collate(w[1].as_bytes(), w[0].as_bytes()), Greater, "{} {w:?}", loc.name());
            }
        };
        ordered(&en, &["a", "B", "c", "e", "é", "f", "Z"]);
        ordered(&installed("sv_SE.UTF-8"), &["a", "z", "å", "ä", "ö"]);
        ordered(&installed("de_DE.UTF-8"), &["a", "ä", "b", "o", "ö", "p"]);
        assert_eq!(en.numbers(), Numbers { decimal: b'.', group: u16::from(b','), unit_group: Some(b','), group_ignored: false });
        let de = installed("de_DE.UTF-8");
        assert_eq!(de.numbers(), Numbers { decimal: b',', group: u16::from(b'.'), unit_group: Some(b'.'), group_ignored: false });
        let sv = installed("sv_SE.UTF-8").numbers();
        assert!(sv.decimal == b',' && sv.group == 0x80 && sv.unit_group.is_none() && sv.group_ignored);
        // An 8-bit locale: é is a letter that folds to É; the no-break space groups digits only
        // where GNU reads it as a signed char (the unit of -h), never in strnumcmp.
        let fr = installed("fr_FR.ISO-8859-1");
        let classes = fr.byte_classes();
        assert!(!classes.nondictionary[0xe9] && !classes.nonprinting[0xe9] && classes.toupper[0xe9] == 0xc9);
        assert!(classes.nondictionary[0xd7] && C_CLASSES.nonprinting[0xe9] && C_CLASSES.toupper[0xe9] == 0xe9);
        assert_eq!(fr.numbers(), Numbers { decimal: b',', group: NO_BYTE, unit_group: Some(0xa0), group_ignored: false });
        assert_eq!(fr.month_at(b"F\xc9VR."), (2, 5));
        assert_eq!(fr.month_at(b"f\xe9vr."), (2, 5));
        assert!(std::ptr::eq(installed("de_DE.UTF-8").byte_classes(), &C_CLASSES));
        assert_eq!(de.month_at("  mär x".as_bytes()), (3, 6));
        assert_eq!(de.month_at(b"dez"), (12, 3));
        assert_eq!(de.month_at(b"dec"), (0, 0));
        assert_eq!(en.debug_width("é\te\u{301}".as_bytes()), 3);
        assert_eq!(en.debug_width(b"a\xff\xfeb\xe2\x82"), 5);
    }

    /// A key too long for a whole transform gets its prefix from a bounded buffer: the same
    /// prefix the whole transform gives.
    #[test]
    fn long_keys_get_the_prefix_of_their_whole_transform() {
        if !xsort_testkit::locales(&xsort_testkit::TEST_LOCALES) {
            return;
        }
        const PIECES: [&str; 9] = ["a", "é", "B", "ß", "\u{fb03}", "\u{301}", "-", " ", "\u{fdfa}"];
        for name in xsort_testkit::TEST_LOCALES {
            let loc = installed(name);
            let handle = loc.inner.as_ref().unwrap().handle.0;
            for seed in 0..40usize {
                let key: Vec<u8> =
                    (0..LONGEST_TRANSFORMED + seed).flat_map(|i| PIECES[(i * 7 + seed * i / 5) % PIECES.len()].bytes()).collect();
                assert!(key.len() > LONGEST_TRANSFORMED);
                assert!(!loc.primary_weights(None, None, &key, &mut Vec::new()), "too long for a whole transform");
                let (mut src, mut whole) = (key.clone(), Vec::new());
                src.push(0);
                xfrm_append(&src, handle, &mut whole);
                let primary = whole.iter().position(|&b| b <= 1).unwrap_or(whole.len());
                assert_eq!(loc.xfrm_prefix(None, None, &key), super::super::prefix::bytes(&whole[..primary]), "{name} {seed}");
            }
        }
    }

    /// Keys that collate equal have equal prefixes and transforms, and the prefixes never
    /// contradict the collation (the transforms may: glibc's strxfrm and strcoll disagree on some
    /// strings; `-R`, which GNU also hashes by strxfrm, uses them only to group equal keys).
    #[test]
    fn prefixes_and_transforms_agree_with_the_collation() {
        if !xsort_testkit::locales(&xsort_testkit::TEST_LOCALES) {
            return;
        }
        const PIECES: [&str; 22] = [
            "a", "A", "e", "é", "É", "f", "z", "å", "ä", "ö", "-", " ", "1", "\0", "\u{301}", "\u{ff}", "ß", "ss", "Æ", "\u{3b1}",
            "\u{4e2d}", "\u{308}",
        ];
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        for name in xsort_testkit::TEST_LOCALES {
            let loc = installed(name);
            let keys: Vec<Vec<u8>> = (0..600)
                .map(|_| {
                    let mut k: Vec<u8> = (0..next(7)).flat_map(|_| PIECES[next(PIECES.len())].bytes()).collect();
                    if next(10) == 0 {
                        k.push(0xff);
                    }
                    k
                })
                .collect();
            let (mut xa, mut xb) = (Vec::new(), Vec::new());
            for a in &keys {
                for b in &keys {
                    let c = loc.collate(a, b);
                    assert_eq!(c, loc.collate(b, a).reverse(), "{name} {a:?} {b:?}");
                    let (pa, pb) = (loc.xfrm_prefix(None, None, a), loc.xfrm_prefix(None, None, b));
                    if pa < pb {
                        assert_eq!(c, Less, "{name} {a:?} {b:?}");
                    }
                    if c == Equal {
                        assert_eq!(pa, pb, "{name} {a:?} {b:?}");
                    }
                    loc.xfrm_into(None, None, a, &mut xa);
                    loc.xfrm_into(None, None, b, &mut xb);
                    if c == Equal {
                        assert_eq!(xa, xb, "{name} {a:?} {b:?}");
                    }
                }
            }
        }
    }
}
