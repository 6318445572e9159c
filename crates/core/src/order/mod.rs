//! GNU sort 9.1's ordering of text lines, byte for byte: in the C locale (`LC_ALL=C`) or in the
//! user's ([`Locale`]: collation, numbers and month names).
//!
//! [`LineOrder`] is built once from the parsed options ([`LineOrderConfig`]: the `-k` keys as
//! [`KeyField`]s, the global ordering flags as [`OrderFlags`], `-t`, `-s`, `-u` and the `-R` seed)
//! and then answers, for lines given without their terminator:
//!
//! - [`LineOrder::compare`]: GNU's `compare()`: the keys in order, each possibly reversed, then
//!   (unless `-s` or `-u` with keys) the last-resort byte comparison of whole lines, reversed by a
//!   global `-r`;
//! - [`LineOrder::prefix`]: an order-preserving 96-bit summary of the first key, so that a sort engine
//!   can order most pairs by integer comparison and call `compare` only for ties;
//! - [`LineOrder::debug_warnings`] / [`LineOrder::debug_annotate`]: what `sort --debug` prints.
//!
//! The files: `keydef` (parsing `-k`, locating fields), `numeric` (`-n`, `-h`, `-M`), `general`
//! (`-g` through a C `strtold` shim), `version` (`-V`), `random` (`-R`), `prefix` and `debug`.

mod debug;
mod general;
mod keydef;
mod locale;
mod numeric;
mod prefix;
mod random;
mod version;

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::csv::CsvDialect;
use crate::error::SortError;
use crate::json::JsonKey;

pub use keydef::KeyField;
pub use locale::Locale;

/// GNU's per-key / global ordering options b d f g h i M n R r V.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OrderFlags {
    /// `b` at a key's start: skip leading blanks before the start position.
    pub blank_start: bool,
    /// `b` at a key's end: skip leading blanks before counting the end character.
    pub blank_end: bool,
    /// `d`: consider only blanks and alphanumerics.
    pub dictionary: bool,
    /// `f`: fold lower case to upper case.
    pub fold: bool,
    /// `g`: general numeric (strtold) comparison.
    pub general_numeric: bool,
    /// `h`: human numeric comparison (2K < 1M).
    pub human_numeric: bool,
    /// `i`: consider only printable characters.
    pub nonprinting: bool,
    /// `M`: month names.
    pub month: bool,
    /// `n`: string numeric comparison.
    pub numeric: bool,
    /// `R`: random hash of the key.
    pub random: bool,
    /// `r`: reverse.
    pub reverse: bool,
    /// `V`: version order.
    pub version: bool,
}

impl OrderFlags {
    /// Applies one option letter as GNU's global option does (-b sets both blank flags); false if `c` is not one of bdfghiMnRrV.
    pub fn set_global(&mut self, c: char) -> bool {
        self.set_letter(c, true, true)
    }

    /// Applies one option letter; `b` sets the blank flags selected by `start` / `end`.
    pub(crate) fn set_letter(&mut self, c: char, start: bool, end: bool) -> bool {
        match c {
            'b' => {
                self.blank_start |= start;
                self.blank_end |= end;
            }
            'd' => self.dictionary = true,
            'f' => self.fold = true,
            'g' => self.general_numeric = true,
            'h' => self.human_numeric = true,
            'i' => self.nonprinting = true,
            'M' => self.month = true,
            'n' => self.numeric = true,
            'R' => self.random = true,
            'r' => self.reverse = true,
            'V' => self.version = true,
            _ => return false,
        }
        true
    }

    /// GNU's `default_key_compare`: no option that changes how a key compares (`r` aside).
    pub(crate) fn is_default_compare(&self) -> bool {
        !(self.dictionary
            || self.nonprinting
            || self.fold
            || self.blank_start
            || self.blank_end
            || self.numeric
            || self.general_numeric
            || self.human_numeric
            || self.month
            || self.version
            || self.random)
    }

    /// The ignore table GNU ends up with: `d` wins over `i` whatever their order.
    pub(crate) fn ignore(&self) -> Ignore {
        if self.dictionary {
            Ignore::NonDictionary
        } else if self.nonprinting {
            Ignore::NonPrinting
        } else {
            Ignore::None
        }
    }

    /// GNU's `key_to_opts`: the letters in the order "bdfghiMnRrV".
    pub(crate) fn letters(&self) -> String {
        let mut s = String::new();
        let ignore = self.ignore();
        for (on, c) in [
            (self.blank_start || self.blank_end, 'b'),
            (ignore == Ignore::NonDictionary, 'd'),
            (self.fold, 'f'),
            (self.general_numeric, 'g'),
            (self.human_numeric, 'h'),
            (ignore == Ignore::NonPrinting, 'i'),
            (self.month, 'M'),
            (self.numeric, 'n'),
            (self.random, 'R'),
            (self.reverse, 'r'),
            (self.version, 'V'),
        ] {
            if on {
                s.push(c);
            }
        }
        s
    }

    /// Whether one of the numeric flavours n, g, h is set (GNU's `key_numeric`).
    pub(crate) fn is_numeric(&self) -> bool {
        self.numeric || self.general_numeric || self.human_numeric
    }
}

/// Which bytes a key ignores (`-d` / `-i`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ignore {
    None,
    NonDictionary,
    NonPrinting,
}

impl Ignore {
    /// The bytes ignored, as `classes` (a locale's) classify them.
    pub(crate) fn table(self, classes: &'static ByteClasses) -> Option<&'static [bool; 256]> {
        match self {
            Ignore::None => None,
            Ignore::NonDictionary => Some(&classes.nondictionary),
            Ignore::NonPrinting => Some(&classes.nonprinting),
        }
    }
}

/// How a key's text compares, in GNU's order of precedence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Numeric,
    General,
    Human,
    Month,
    Random,
    Version,
}

/// `usize::MAX` as GNU's SIZE_MAX: "from the line's start" for `sword`, "to the line's end" for `eword`.
pub(crate) const NONE: usize = usize::MAX;

/// A key resolved for comparison (global flags applied).
#[derive(Clone, Debug)]
pub(crate) struct Key {
    pub(crate) sword: usize,
    pub(crate) schar: usize,
    pub(crate) eword: usize,
    pub(crate) echar: usize,
    pub(crate) flags: OrderFlags,
    /// The bytes `-d` or `-i` ignore, in the order's locale.
    pub(crate) ignore: Option<&'static [bool; 256]>,
    /// `-f`'s upper case of each byte, in the order's locale.
    pub(crate) fold: Option<&'static [u8; 256]>,
    pub(crate) kind: Kind,
    pub(crate) obsolete: bool,
    /// A key of JSON lines: its path and how its strings compare (its text is then the value's
    /// byte-ordered form, compared as plain bytes).
    pub(crate) json: Option<Box<JsonKey>>,
}

impl Key {
    fn new(sword: usize, schar: usize, eword: usize, echar: usize, flags: OrderFlags, obsolete: bool) -> Key {
        let kind = if flags.numeric {
            Kind::Numeric
        } else if flags.general_numeric {
            Kind::General
        } else if flags.human_numeric {
            Kind::Human
        } else if flags.month {
            Kind::Month
        } else if flags.random {
            Kind::Random
        } else if flags.version {
            Kind::Version
        } else {
            Kind::Text
        };
        let mut key = Key { sword, schar, eword, echar, flags, ignore: None, fold: None, kind, obsolete, json: None };
        key.classify_bytes_as(&C_CLASSES);
        key
    }

    /// Takes the bytes `-d`, `-i` and `-f` act on from `classes` (a locale's).
    fn classify_bytes_as(&mut self, classes: &'static ByteClasses) {
        self.ignore = self.flags.ignore().table(classes);
        self.fold = self.flags.fold.then_some(&classes.toupper);
    }

    /// A key of JSON lines at `path` (`.user.age`); of the ordering letters it takes `n`
    /// (strings that hold a number compare as numbers), `f` (fold strings' case) and `r`.
    fn json(path: &str, flags: OrderFlags) -> Result<Key, SortError> {
        let path = JsonKey::parse(path).map_err(SortError::BadOption)?;
        let plain = OrderFlags { numeric: false, fold: false, reverse: false, ..flags };
        if plain != OrderFlags::default() {
            return Err(SortError::BadOption(format!(
                "a key of JSON lines takes the ordering letters n, f and r, not '{}'",
                plain.letters()
            )));
        }
        let json = JsonKey { path, numeric: flags.numeric, fold: flags.fold };
        let mut key = Key::new(NONE, 0, NONE, 0, OrderFlags { reverse: flags.reverse, ..OrderFlags::default() }, false);
        key.json = Some(Box::new(json));
        Ok(key)
    }

    /// The key's byte range in `line` (begin <= end), as GNU's keycompare finds it.
    #[inline]
    pub(crate) fn range(&self, line: &[u8], tab: Option<u8>) -> (usize, usize) {
        if let Some((beg, lim)) = tab.and_then(|t| keydef::tab_range(line, self, t)) {
            return (beg, lim.max(beg));
        }
        let lim = if self.eword == NONE { line.len() } else { keydef::limfield(line, self, tab) };
        let beg = if self.sword != NONE {
            keydef::begfield(line, self, tab)
        } else {
            let mut p = 0;
            if self.flags.blank_start {
                while p < lim && BLANK[line[p] as usize] {
                    p += 1;
                }
            }
            p
        };
        (beg, lim.max(beg))
    }

    /// Compares two keys' texts (not reversed), in `order`'s locale.
    #[inline]
    fn compare_text(&self, a: &[u8], b: &[u8], order: &LineOrder) -> Ordering {
        let locale = &order.locale;
        match self.kind {
            Kind::Text if locale.collates() => match (self.ignore, self.fold) {
                (None, None) => locale.collate(a, b),
                (ignore, fold) => locale.collate_transformed(ignore, fold, a, b),
            },
            Kind::Text => text_compare(self.ignore, self.fold, a, b),
            Kind::Numeric => numeric::numcompare(a, b, locale.numbers()),
            Kind::Human => numeric::human_numcompare(a, b, self.fold.is_some(), locale.numbers()),
            Kind::General => general::general_numcompare(a, b, locale),
            Kind::Month => locale.month_at(a).0.cmp(&locale.month_at(b).0),
            Kind::Random => random::compare(&order.hash_key, locale, self.ignore, self.fold, a, b),
            Kind::Version => version::compare_transformed(self.ignore, self.fold, a, b),
        }
    }
}

/// Everything GNU's ordering depends on, as parsed from the command line.
#[derive(Clone, Debug, Default)]
pub struct LineOrderConfig {
    /// The `-k` keys in order.
    pub keys: Vec<KeyField>,
    /// The global ordering options.
    pub global: OrderFlags,
    /// `-t SEP`.
    pub separator: Option<u8>,
    /// `-s`.
    pub stable: bool,
    /// `-u`.
    pub unique: bool,
    /// Bytes for -R; the CLI fills it from --random-source or the OS.
    pub random_seed: Vec<u8>,
    /// Lines are CSV records: keys count CSV fields and compare their unquoted values.
    pub csv: Option<CsvDialect>,
    /// Lines are JSON values (JSON lines): keys are paths into them (`-k .user.age:n`).
    pub jsonl: bool,
    /// The locale text, numbers and month names follow (the C locale by default). JSON lines
    /// ignore it: their values order as jq orders them.
    pub locale: Locale,
}

/// GNU sort's line ordering, ready to compare lines (see the module documentation).
#[derive(Clone, Debug)]
pub struct LineOrder {
    keys: Vec<Key>,
    tab: Option<u8>,
    stable: bool,
    unique: bool,
    /// Global `-r`: reverses the last-resort comparison.
    reverse: bool,
    global: OrderFlags,
    /// The only key is GNU's implicit whole-line key (global flags, no -k).
    gkey_only: bool,
    hash_key: random::HashKey,
    /// CSV records: keys on their fields' values.
    csv: Option<CsvDialect>,
    /// The lines are JSON values.
    jsonl: bool,
    /// Keys that name a column of the header (`-k price:n`), unresolved until the header is read:
    /// their place among the keys and their name.
    columns: Vec<(usize, String)>,
    /// The locale of text, numbers and month names.
    locale: Locale,
}

impl LineOrder {
    /// Applies global flags to keys with none of their own, adds GNU's implicit whole-line key when global ordering flags but no -k are given, and rejects incompatible options with GNU's message ("options '-gn' are incompatible").
    pub fn new(cfg: LineOrderConfig) -> Result<LineOrder, SortError> {
        let global = cfg.global;
        let mut keys: Vec<Key> = cfg
            .keys
            .iter()
            .map(|k| {
                let flags = if k.has_own_flags() { k.flags() } else { global };
                let (sword, schar, eword, echar) = k.positions();
                Key::new(sword, schar, eword, echar, flags, k.is_obsolete())
            })
            .collect();
        let mut columns: Vec<(usize, String)> =
            cfg.keys.iter().enumerate().filter_map(|(i, k)| Some((i, k.column_name()?.to_owned()))).collect();
        if cfg.jsonl {
            // Every key is a path into the line's value.
            for (i, k) in cfg.keys.iter().enumerate() {
                let Some(path) = k.column_name() else {
                    return Err(SortError::BadOption(
                        "keys of JSON lines are paths into their values, as -k .user.age or -k '.items[0].id:nr', not field numbers".into(),
                    ));
                };
                keys[i] = Key::json(path, if k.has_own_flags() { k.flags() } else { global })?;
            }
            columns.clear();
        }
        let mut gkey_only = false;
        if keys.is_empty() && !global.is_default_compare() {
            keys.push(Key::new(NONE, 0, NONE, 0, global, false));
            gkey_only = true;
        }
        for key in keys.iter_mut().filter(|k| k.json.is_none()) {
            key.classify_bytes_as(cfg.locale.byte_classes());
        }
        for key in &keys {
            let f = &key.flags;
            let count = f.numeric as u32
                + f.general_numeric as u32
                + f.human_numeric as u32
                + f.month as u32
                + (f.version || f.random || f.ignore() != Ignore::None) as u32;
            if count > 1 {
                let mut shown = *f;
                shown.blank_start = false;
                shown.blank_end = false;
                shown.reverse = false;
                return Err(SortError::BadOption(format!("options '-{}' are incompatible", shown.letters())));
            }
        }
        Ok(LineOrder {
            keys,
            tab: cfg.separator,
            stable: cfg.stable,
            unique: cfg.unique,
            reverse: global.reverse,
            global,
            gkey_only,
            hash_key: random::HashKey::from_seed(&cfg.random_seed),
            csv: cfg.csv.map(|d| CsvDialect { separator: cfg.separator.unwrap_or(d.separator), ..d }),
            jsonl: cfg.jsonl,
            columns,
            locale: if cfg.jsonl { Locale::C } else { cfg.locale },
        })
    }

    /// The CSV dialect of the lines, when they are CSV records.
    pub fn csv(&self) -> Option<CsvDialect> {
        self.csv
    }

    /// Whether the lines are JSON values (JSON lines), keyed by paths into them.
    pub fn is_jsonl(&self) -> bool {
        self.jsonl
    }

    /// The first key that names a header's column, not yet resolved ([`Self::with_header`]).
    pub fn unresolved_column(&self) -> Option<&str> {
        self.columns.first().map(|(_, name)| name.as_str())
    }

    /// The order with its keys that name columns (`-k price:n`) resolved against `header`, the
    /// first line of the input (without its terminator): its fields (CSV's, `-t`'s, or words
    /// between blanks) are the columns' names. A name that is not one of them is an error.
    pub fn with_header(&self, header: &[u8]) -> Result<LineOrder, SortError> {
        let mut order = self.clone();
        if order.columns.is_empty() {
            return Ok(order);
        }
        let names = keydef::column_names(header, self.csv, self.tab);
        for (i, name) in std::mem::take(&mut order.columns) {
            let Some(field) = names.iter().position(|n| n == name.as_bytes()) else {
                let known: Vec<String> = names.iter().map(|n| String::from_utf8_lossy(n).into_owned()).collect();
                return Err(SortError::BadOption(format!(
                    "key '{name}' names no column of the header (its columns: {})",
                    known.join(", ")
                )));
            };
            let key = &mut order.keys[i];
            (key.sword, key.schar, key.eword, key.echar) = (field, 0, field, 0);
        }
        Ok(order)
    }

    /// The text a key compares in `line`: its byte range, or for CSV records the unquoted values
    /// of its fields.
    #[inline]
    fn key_text<'l>(&self, key: &Key, line: &'l [u8]) -> Cow<'l, [u8]> {
        if let Some(json) = &key.json {
            return json.text(line);
        }
        match self.csv {
            None => {
                let (b, e) = key.range(line, self.tab);
                Cow::Borrowed(&line[b..e])
            }
            Some(d) => keydef::csv_key(line, key, d.separator),
        }
    }

    /// The locale the order follows.
    pub fn locale(&self) -> &Locale {
        &self.locale
    }

    /// GNU's compare(): the keys, then (unless -s or -u) the last-resort byte comparison of whole lines, honoring -r exactly as GNU does. Lines are given without their terminator.
    #[inline]
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        if !self.keys.is_empty() {
            let diff = self.keycompare(a, b);
            if diff != Ordering::Equal || self.unique || self.stable {
                return diff;
            }
        }
        let diff = self.whole_lines(a, b);
        if self.reverse {
            diff.reverse()
        } else {
            diff
        }
    }

    /// The last-resort comparison of whole lines (not reversed): bytes, or the locale's collation.
    #[inline]
    fn whole_lines(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.locale.collates() {
            self.locale.collate(a, b)
        } else {
            a.cmp(b)
        }
    }

    /// The prefix of whole lines (not reversed), as [`prefix::bytes`] gives it for bytes.
    #[inline]
    fn whole_line_prefix(&self, line: &[u8]) -> u128 {
        if self.locale.collates() {
            self.locale.xfrm_prefix(None, None, line)
        } else {
            prefix::bytes(line)
        }
    }

    /// GNU's keycompare(): the first key that differs decides, reversed if that key is.
    #[inline]
    fn keycompare(&self, a: &[u8], b: &[u8]) -> Ordering {
        for key in &self.keys {
            let diff = key.compare_text(&self.key_text(key, a), &self.key_text(key, b), self);
            if diff != Ordering::Equal {
                return if key.flags.reverse { diff.reverse() } else { diff };
            }
        }
        Ordering::Equal
    }

    /// A byte-comparable prefix of the line's order: only the top 96 bits may be non-zero. Must satisfy: prefix(a) < prefix(b) implies compare(a,b) == Less, and compare(a,b) == Equal implies prefix(a) == prefix(b). Returning 0 is always correct, but the engine's speed depends on this prefix separating lines: for plain byte keys use the first 12 key bytes; for -n encode the numeric value order-preservingly (sign, magnitude/digit count, leading digits); -g the parsed long double; -h unit order then number; -M month number; -R the hash; -r inverts; -f/-d/-i the transformed bytes. Only the first key needs a prefix.
    #[inline]
    pub fn prefix(&self, line: &[u8]) -> u128 {
        self.level_prefix(line, 0)
    }

    /// Comparison levels of [`Self::compare`]: one per key, plus the last-resort comparison of whole
    /// lines when it applies. Lines compare equal when every level does; the first level that
    /// differs decides.
    pub fn levels(&self) -> usize {
        self.keys.len() + usize::from(self.keys.is_empty() || !(self.unique || self.stable))
    }

    /// The prefix (as [`Self::prefix`]) of one comparison level alone: lines whose earlier levels
    /// are equal are ordered at this level consistently with it.
    #[inline]
    pub fn level_prefix(&self, line: &[u8], level: usize) -> u128 {
        match self.keys.get(level) {
            Some(key) => {
                let p = prefix::key(key, &self.key_text(key, line), self);
                if key.flags.reverse {
                    prefix::invert(p)
                } else {
                    p
                }
            }
            None if self.reverse => prefix::invert(self.whole_line_prefix(line)),
            None => self.whole_line_prefix(line),
        }
    }

    /// The bytes of `line` a key level orders by, and whether it reverses them, when the key
    /// compares plain bytes (text without -d, -i or -f, in the C locale); None for other levels.
    #[inline]
    pub fn level_bytes<'l>(&self, line: &'l [u8], level: usize) -> Option<(&'l [u8], bool)> {
        let plain = |k: &&Key| {
            k.kind == Kind::Text
                && k.ignore.is_none()
                && k.fold.is_none()
                && k.json.is_none()
                && self.csv.is_none()
                && !self.locale.collates()
        };
        let key = self.keys.get(level).filter(plain)?;
        let (b, e) = key.range(line, self.tab);
        Some((&line[b..e], key.flags.reverse))
    }

    /// For a level that compares text in a collating locale: appends the primary collation
    /// weights of the line's key at that level to `out` (keys with smaller weights are smaller
    /// there, keys equal there have equal weights) and returns whether the level is reversed. None
    /// for other levels, and for a key too long to transform.
    pub fn level_transform(&self, line: &[u8], level: usize, out: &mut Vec<u8>) -> Option<bool> {
        if !self.locale.collates() {
            return None;
        }
        match self.keys.get(level) {
            Some(key) if key.kind == Kind::Text && key.json.is_none() => {
                self.locale.primary_weights(key.ignore, key.fold, &self.key_text(key, line), out).then_some(key.flags.reverse)
            }
            Some(_) => None,
            None => self.locale.primary_weights(None, None, line, out).then_some(self.reverse),
        }
    }

    /// Whether two lines are equal in their first `keys` `-k` keys (all of them when None); a line
    /// without keys is its own key.
    pub fn keys_equal(&self, a: &[u8], b: &[u8], keys: Option<usize>) -> bool {
        if self.keys.is_empty() {
            return self.whole_lines(a, b) == Ordering::Equal;
        }
        let n = keys.unwrap_or(self.keys.len()).min(self.keys.len());
        (0..n).all(|level| self.level_equal(a, b, level))
    }

    /// Whether two lines are equal at one comparison level.
    #[inline]
    pub fn level_equal(&self, a: &[u8], b: &[u8], level: usize) -> bool {
        match self.keys.get(level) {
            Some(key) => key.compare_text(&self.key_text(key, a), &self.key_text(key, b), self) == Ordering::Equal,
            None => self.whole_lines(a, b) == Ordering::Equal,
        }
    }

    /// A test for lines equal to `first` at one comparison level, with `first`'s key found once.
    pub fn level_matcher<'a>(&'a self, first: &'a [u8], level: usize) -> crate::framing::Matcher<'a> {
        match self.keys.get(level) {
            Some(key) => {
                let first_key = self.key_text(key, first);
                Box::new(move |line| key.compare_text(&first_key, &self.key_text(key, line), self) == Ordering::Equal)
            }
            None => Box::new(move |line| self.whole_lines(first, line) == Ordering::Equal),
        }
    }

    /// Whether compare() can only return Equal for byte-identical lines (lets the engine skip work); optional optimisation, may return false.
    ///
    /// True whenever the last-resort comparison of bytes runs (no keys, or neither `-s` nor `-u`;
    /// in the C locale: a locale's collation may find different lines equal).
    pub fn is_plain_bytes(&self) -> bool {
        (self.keys.is_empty() || !(self.stable || self.unique)) && !self.locale.collates()
    }

    /// Whether compare() is exactly `a.cmp(b)` on the raw bytes (no key, no `-r`, the C locale).
    pub fn is_memcmp(&self) -> bool {
        self.keys.is_empty() && !self.reverse && !self.locale.collates()
    }

    /// --debug: GNU's warnings for these options (the lines GNU prints to stderr before sorting), and the annotation GNU prints for one line (the line, then one underline per key and one for the last-resort comparison).
    ///
    /// The messages come without GNU's "sort: " prefix; the caller adds its program name.
    pub fn debug_warnings(&self) -> Vec<String> {
        debug::warnings(self)
    }

    /// --debug: appends to `out` what GNU prints for `line` (given without its terminator): the
    /// line with tabs shown as '>' and a newline, then one underline per key and, unless `-s` or
    /// `-u` apply to keys, one for the last-resort comparison.
    pub fn debug_annotate(&self, line: &[u8], out: &mut Vec<u8>) {
        debug::annotate(self, line, out)
    }
}

/// Lexicographic comparison of the key bytes after dropping ignored bytes and folding case.
#[inline]
pub(crate) fn text_compare(ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, a: &[u8], b: &[u8]) -> Ordering {
    match (ignore, fold) {
        (None, None) => a.cmp(b),
        (None, Some(upper)) => {
            for (&x, &y) in a.iter().zip(b) {
                let d = upper[x as usize].cmp(&upper[y as usize]);
                if d != Ordering::Equal {
                    return d;
                }
            }
            a.len().cmp(&b.len())
        }
        (Some(ig), _) => {
            let tr = fold.unwrap_or(&IDENTITY);
            let (mut i, mut j) = (0, 0);
            loop {
                while i < a.len() && ig[a[i] as usize] {
                    i += 1;
                }
                while j < b.len() && ig[b[j] as usize] {
                    j += 1;
                }
                if i == a.len() || j == b.len() {
                    return (i < a.len()).cmp(&(j < b.len()));
                }
                let d = tr[a[i] as usize].cmp(&tr[b[j] as usize]);
                if d != Ordering::Equal {
                    return d;
                }
                i += 1;
                j += 1;
            }
        }
    }
}

/// The key bytes after dropping ignored bytes and folding case (for -R and -V), reusing `buf`.
pub(crate) fn transform_into(ignore: Option<&[bool; 256]>, fold: Option<&[u8; 256]>, s: &[u8], buf: &mut Vec<u8>) {
    buf.clear();
    let tr = fold.unwrap_or(&IDENTITY);
    buf.extend(s.iter().filter(|&&c| !ignore.is_some_and(|ig| ig[c as usize])).map(|&c| tr[c as usize]));
}

const fn is_blank_c(c: u8) -> bool {
    c == b' ' || c == b'\t' || c == b'\n'
}

const fn is_alnum_c(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}

const fn build_blank() -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = is_blank_c(i as u8);
        i += 1;
    }
    t
}

const fn build_nondictionary() -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = !is_blank_c(i as u8) && !is_alnum_c(i as u8);
        i += 1;
    }
    t
}

const fn build_nonprinting() -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = !(i >= 0x20 && i <= 0x7e);
        i += 1;
    }
    t
}

const fn build_toupper() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = (i as u8).to_ascii_uppercase();
        i += 1;
    }
    t
}

const fn build_identity() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i as u8;
        i += 1;
    }
    t
}

/// GNU's `blanks`: isblank in the C locale (space, tab) plus newline. No glibc locale has another
/// blank byte (its blank class holds no character of any 8-bit character set beyond these), and
/// [`Locale`] refuses one that would.
pub(crate) static BLANK: [bool; 256] = build_blank();
/// GNU's `fold_toupper` in the C locale (also `-h`'s, whose unit letters are ASCII everywhere).
pub(crate) static TOUPPER: [u8; 256] = build_toupper();
/// The identity translation.
pub(crate) static IDENTITY: [u8; 256] = build_identity();

/// GNU's single-byte tables that follow the locale's `LC_CTYPE` (its `inittables`): what `-d` and
/// `-i` ignore and how `-f` and `-M` upper-case. In the C locale and every UTF-8 one (whose single
/// bytes are ASCII or parts of characters) they are the C locale's; an 8-bit locale (ISO-8859-1)
/// has letters, printable bytes and upper cases beyond ASCII.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ByteClasses {
    /// GNU's `nondictionary`: neither blank nor alphanumeric.
    pub(crate) nondictionary: [bool; 256],
    /// GNU's `nonprinting`: not isprint.
    pub(crate) nonprinting: [bool; 256],
    /// GNU's `fold_toupper`: toupper.
    pub(crate) toupper: [u8; 256],
}

/// The C locale's [`ByteClasses`].
pub(crate) static C_CLASSES: ByteClasses =
    ByteClasses { nondictionary: build_nondictionary(), nonprinting: build_nonprinting(), toupper: build_toupper() };

#[cfg(test)]
mod tests;
