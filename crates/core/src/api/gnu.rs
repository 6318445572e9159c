//! GNU sort's ordering options, in one place for the `xsort` command and the library: the command
//! (whose parser also reads the options that are not about order) and [`Sort::gnu_args`](super::Sort::gnu_args)
//! (which parses arguments as `sort` parses them: grouped short letters (`-nr`), values attached or
//! in the next argument (`-t,`, `-k 2,2n`), and long forms (`--key=...`, `--numeric-sort`)) both
//! fill a [`GnuOrdering`], which alone checks the options against each other and makes the order
//! of lines. Options that are not about the order of lines are refused by `gnu_args`: the builder
//! has methods for them.

use crate::error::{Result, SortError};
use crate::order::{KeyField, LineOrderConfig};
use std::io::Read;
use std::path::{Path, PathBuf};

/// GNU sort's ordering options as given, before they are checked against each other
/// ([`Sort::gnu_ordering`](super::Sort::gnu_ordering) checks them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GnuOrdering {
    /// The global ordering letters given (`b d f g h i M n R r V`), in order.
    pub letters: Vec<char>,
    /// The `--sort=WORD` values, in order.
    pub sort_words: Vec<String>,
    /// The keys (`-k`), in priority order.
    pub keys: Vec<KeyField>,
    /// The `-t` values: each one byte (or `\0`), all the same.
    pub separators: Vec<String>,
    /// `-s`: no last-resort comparison of whole lines.
    pub stable: bool,
    /// `-u`: only the first of each run of equal lines.
    pub unique: bool,
    /// `-z`: lines end with NUL.
    pub zero_terminated: bool,
    /// `-m`: the inputs are already sorted; merge them.
    pub merge: bool,
    /// `--random-source`: where `-R` takes its hash's seed (default: fresh random bytes).
    pub random_source: Option<PathBuf>,
}

/// What the options mean.
pub(super) struct Parsed {
    /// The order of lines.
    pub order: LineOrderConfig,
    /// `-z`: lines end with NUL.
    pub zero_terminated: bool,
    /// `-m`: the inputs are already sorted; merge them.
    pub merge: bool,
}

impl GnuOrdering {
    /// Checks the options against each other and applies them on top of `order`.
    pub(super) fn apply(self, mut order: LineOrderConfig) -> Result<Parsed> {
        for c in self.letters {
            order.global.set_global(c);
        }
        for word in &self.sort_words {
            // As GNU's argmatch: the word, or the one word it begins (`--sort=num`).
            let mut begun = SORT_WORDS.iter().filter(|(w, _)| w.starts_with(word.as_str()));
            let found = SORT_WORDS.iter().find(|(w, _)| w == word).or(match (begun.next(), begun.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            });
            match found {
                Some(&(_, c)) => order.global.set_global(c),
                None => return Err(SortError::InvalidArgument { option: "--sort".into(), value: word.clone() }),
            };
        }
        order.keys.extend(self.keys);
        for v in &self.separators {
            let b = match v.as_bytes() {
                [] => return Err(bad("empty tab".into())),
                [b] => *b,
                b"\\0" => 0,
                _ => return Err(bad(format!("multi-character tab '{v}'"))),
            };
            if order.separator.is_some_and(|s| s != b) {
                return Err(bad("incompatible tabs".into()));
            }
            order.separator = Some(b);
        }
        order.stable |= self.stable;
        order.unique |= self.unique;
        let random = order.global.random || order.keys.iter().any(|k| k.flags().random);
        if random && order.random_seed.is_empty() {
            order.random_seed = random_seed(self.random_source.as_deref())?;
        }
        Ok(Parsed { order, zero_terminated: self.zero_terminated, merge: self.merge })
    }
}

/// Long options that are a letter of their own.
const LONG_LETTERS: [(&str, char); 15] = [
    ("ignore-leading-blanks", 'b'),
    ("dictionary-order", 'd'),
    ("ignore-case", 'f'),
    ("general-numeric-sort", 'g'),
    ("human-numeric-sort", 'h'),
    ("ignore-nonprinting", 'i'),
    ("month-sort", 'M'),
    ("numeric-sort", 'n'),
    ("random-sort", 'R'),
    ("reverse", 'r'),
    ("version-sort", 'V'),
    ("stable", 's'),
    ("unique", 'u'),
    ("zero-terminated", 'z'),
    ("merge", 'm'),
];

/// `--sort=WORD` and the letter it means.
const SORT_WORDS: [(&str, char); 6] =
    [("general-numeric", 'g'), ("human-numeric", 'h'), ("month", 'M'), ("numeric", 'n'), ("random", 'R'), ("version", 'V')];

/// Parses `args` as `sort` parses its ordering options.
pub(super) fn parse<I, S>(args: I) -> Result<GnuOrdering>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut o = GnuOrdering::default();
    let args: Vec<String> = args.into_iter().map(|a| a.as_ref().to_owned()).collect();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |option: &str| it.next().cloned().ok_or_else(|| bad(format!("option '{option}' requires an argument")));
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v.to_owned())));
            match name {
                "key" | "field-separator" | "sort" | "random-source" => {
                    let v = match inline {
                        Some(v) => v,
                        None => value(arg)?,
                    };
                    o.long_value(name, v)?;
                }
                _ => match LONG_LETTERS.iter().find(|(n, _)| *n == name) {
                    Some(&(_, c)) if inline.is_none() => o.letter(c),
                    _ => return Err(not_ordering(arg)),
                },
            }
        } else if let Some(short) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
            for (i, c) in short.char_indices() {
                if c == 'k' || c == 't' {
                    let rest = &short[i + 1..];
                    let v = if rest.is_empty() { value(arg)? } else { rest.to_owned() };
                    o.long_value(if c == 'k' { "key" } else { "field-separator" }, v)?;
                    break;
                }
                if !"bdfghiMnRrVsuzm".contains(c) {
                    return Err(not_ordering(arg));
                }
                o.letter(c);
            }
        } else {
            return Err(bad(format!("'{arg}' is not an option; inputs are given with input_path, input_reader or push")));
        }
    }
    Ok(o)
}

impl GnuOrdering {
    /// A letter option (`-n`, `-s`...).
    fn letter(&mut self, c: char) {
        match c {
            's' => self.stable = true,
            'u' => self.unique = true,
            'z' => self.zero_terminated = true,
            'm' => self.merge = true,
            c => self.letters.push(c),
        }
    }

    /// An option with a value, by its long name.
    fn long_value(&mut self, name: &str, v: String) -> Result<()> {
        match name {
            "key" => self.keys.push(KeyField::parse_or_column(&v)?),
            "field-separator" => self.separators.push(v),
            "sort" => self.sort_words.push(v),
            _ => self.random_source = Some(v.into()),
        }
        Ok(())
    }
}

/// Bytes of `--random-source` the hash needs, as GNU sort reads them.
const RANDOM_SOURCE_BYTES: usize = 16;

/// The start of `source`, or fresh random bytes; failures worded as GNU sort words them.
fn random_seed(source: Option<&Path>) -> Result<Vec<u8>> {
    let path = source.unwrap_or(Path::new("/dev/urandom"));
    let mut seed = vec![0u8; 64];
    let mut f = std::fs::File::open(path)
        .map_err(|e| SortError::BadOption(format!("open failed: {}: {}", path.display(), xsort_io::os_text(&e))))?;
    let mut n = 0;
    while n < seed.len() {
        let read = f.read(&mut seed[n..]);
        match read.map_err(|e| SortError::BadInput {
            path: path.into(),
            offset: None,
            problem: format!("read failed: {}", xsort_io::os_text(&e)),
        })? {
            0 => break,
            k => n += k,
        }
    }
    if n < RANDOM_SOURCE_BYTES {
        return Err(SortError::BadOption(format!("'{}': end of file", path.display())));
    }
    seed.truncate(n);
    Ok(seed)
}

fn bad(message: String) -> SortError {
    SortError::BadOption(message)
}

fn not_ordering(arg: &str) -> SortError {
    bad(format!(
        "'{arg}' is not an ordering option of lines; memory, threads, temp directories, inputs and the output have builder methods of their own"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Result<Parsed> {
        parse(args)?.apply(LineOrderConfig::default())
    }

    #[test]
    fn short_long_grouped_and_separate_values() {
        let p = parsed(&["-t,", "-k3,3", "-k", "1,1nr", "--key=2", "-su", "--reverse", "-z"]).unwrap();
        assert_eq!(p.order.separator, Some(b','));
        assert_eq!(p.order.keys, ["3,3", "1,1nr", "2"].map(|k| KeyField::parse(k).unwrap()));
        assert!(p.order.stable && p.order.unique && p.order.global.reverse && p.zero_terminated && !p.merge);
        let p = parsed(&["-nrk2", "-t", "\\0", "--sort=month", "-m"]).unwrap();
        assert!(p.order.global.numeric && p.order.global.reverse && p.order.global.month && p.merge);
        assert_eq!(p.order.separator, Some(0));
        assert_eq!(p.order.keys.len(), 1);
    }

    #[test]
    fn refusals_say_why() {
        let msg = |a: &[&str]| parsed(a).err().unwrap().to_string();
        assert_eq!(msg(&["-t,", "-t;"]), "incompatible tabs");
        assert_eq!(msg(&["-tab"]), "multi-character tab 'ab'");
        assert_eq!(msg(&["-k"]), "option '-k' requires an argument");
        assert!(msg(&["-S", "1G"]).starts_with("'-S' is not an ordering option of lines"));
        assert!(msg(&["--output=x"]).starts_with("'--output=x' is not an ordering option"));
        assert!(msg(&["file.txt"]).starts_with("'file.txt' is not an option"));
        assert_eq!(msg(&["--sort=colour"]), "invalid argument 'colour' for '--sort'");
        // A word that begins several is refused; one that begins one word is that word, as in GNU.
        assert_eq!(msg(&["--sort="]), "invalid argument '' for '--sort'");
        let global = |a: &[&str]| format!("{:?}", parsed(a).unwrap().order.global);
        assert_eq!(global(&["--sort=num"]), global(&["-n"]));
        assert_eq!(global(&["--sort=h"]), global(&["-h"]));
    }

    #[test]
    fn random_order_gets_a_seed() {
        assert_eq!(parsed(&["-R"]).unwrap().order.random_seed.len(), 64);
        assert!(parsed(&["-n"]).unwrap().order.random_seed.is_empty());
    }
}
