//! GNU sort's ordering options for [`Sort::gnu_args`](super::Sort::gnu_args), parsed as `sort`
//! parses them: grouped short letters (`-nr`), values attached or in the next argument (`-t,`,
//! `-k 2,2n`), and long forms (`--key=...`, `--numeric-sort`). Options that are not about the
//! order of lines are refused: the builder has methods for them.

use crate::error::{Result, SortError};
use crate::order::{KeyField, LineOrderConfig};
use std::io::Read;

/// What the options said.
pub(super) struct Parsed {
    /// The order of lines.
    pub order: LineOrderConfig,
    /// `-z`: lines end with NUL.
    pub zero_terminated: bool,
    /// `-m`: the inputs are already sorted; merge them.
    pub merge: bool,
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

/// Parses `args` on top of `order`.
pub(super) fn parse<I, S>(args: I, order: LineOrderConfig) -> Result<Parsed>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut p = Parser { parsed: Parsed { order, zero_terminated: false, merge: false }, random_source: None };
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
                    p.long_value(name, &v)?;
                }
                _ => match LONG_LETTERS.iter().find(|(n, _)| *n == name) {
                    Some(&(_, c)) if inline.is_none() => p.letter(c)?,
                    _ => return Err(not_ordering(arg)),
                },
            }
        } else if let Some(short) = arg.strip_prefix('-').filter(|s| !s.is_empty()) {
            for (i, c) in short.char_indices() {
                if c == 'k' || c == 't' {
                    let rest = &short[i + 1..];
                    let v = if rest.is_empty() { value(arg)? } else { rest.to_owned() };
                    p.long_value(if c == 'k' { "key" } else { "field-separator" }, &v)?;
                    break;
                }
                if !"bdfghiMnRrVsuzm".contains(c) {
                    return Err(not_ordering(arg));
                }
                p.letter(c)?;
            }
        } else {
            return Err(bad(format!("'{arg}' is not an option; inputs are given with input_path, input_reader or push")));
        }
    }
    p.finish()
}

struct Parser {
    parsed: Parsed,
    random_source: Option<String>,
}

impl Parser {
    fn letter(&mut self, c: char) -> Result<()> {
        let order = &mut self.parsed.order;
        match c {
            's' => order.stable = true,
            'u' => order.unique = true,
            'z' => self.parsed.zero_terminated = true,
            'm' => self.parsed.merge = true,
            c => {
                order.global.set_global(c);
            }
        }
        Ok(())
    }

    fn long_value(&mut self, name: &str, v: &str) -> Result<()> {
        match name {
            "key" => self.parsed.order.keys.push(KeyField::parse(v)?),
            "field-separator" => {
                let b = match v.as_bytes() {
                    [] => return Err(bad("empty tab".into())),
                    [b] => *b,
                    b"\\0" => 0,
                    _ => return Err(bad(format!("multi-character tab '{v}'"))),
                };
                if self.parsed.order.separator.is_some_and(|s| s != b) {
                    return Err(bad("incompatible tabs".into()));
                }
                self.parsed.order.separator = Some(b);
            }
            "sort" => match SORT_WORDS.iter().find(|(w, _)| *w == v) {
                Some(&(_, c)) => self.letter(c)?,
                None => return Err(bad(format!("invalid argument '{v}' for '--sort'"))),
            },
            _ => self.random_source = Some(v.to_owned()),
        }
        Ok(())
    }

    /// The seed of `-R` when a key asks for random order.
    fn finish(mut self) -> Result<Parsed> {
        let order = &mut self.parsed.order;
        let random = order.global.random || order.keys.iter().any(|k| k.flags().random);
        if random && order.random_seed.is_empty() {
            order.random_seed = random_seed(self.random_source.as_deref())?;
        }
        Ok(self.parsed)
    }
}

/// Bytes of `--random-source` the hash needs, as GNU sort reads them.
const RANDOM_SOURCE_BYTES: usize = 16;

/// The start of `source`, or fresh random bytes.
fn random_seed(source: Option<&str>) -> Result<Vec<u8>> {
    let path = source.unwrap_or("/dev/urandom");
    let cannot = |e: std::io::Error| SortError::BadInput { path: path.into(), problem: format!("cannot read: {}", xsort_io::os_text(&e)) };
    let mut seed = vec![0u8; 64];
    let mut f = std::fs::File::open(path).map_err(cannot)?;
    let mut n = 0;
    while n < seed.len() {
        match f.read(&mut seed[n..]).map_err(cannot)? {
            0 => break,
            k => n += k,
        }
    }
    if n < RANDOM_SOURCE_BYTES {
        return Err(SortError::BadInput { path: path.into(), problem: "end of file".into() });
    }
    seed.truncate(n);
    Ok(seed)
}

fn bad(message: String) -> SortError {
    SortError::Config(message)
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
        parse(args, LineOrderConfig::default())
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
    }

    #[test]
    fn random_order_gets_a_seed() {
        assert_eq!(parsed(&["-R"]).unwrap().order.random_seed.len(), 64);
        assert!(parsed(&["-n"]).unwrap().order.random_seed.is_empty());
    }
}
