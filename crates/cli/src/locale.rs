//! The one warning about the locale. xsort compares text lines byte by byte, as `LC_ALL=C sort`
//! does, whatever the locale says. Someone used to GNU sort under, say, `LANG=en_US.UTF-8` would
//! expect the locale's collation, so when the environment names such a locale for collation and
//! the order asked for does compare text, xsort says once, on standard error, that it does not.
//!
//! The locale for collation is found as GNU's setlocale finds it: the first of `LC_ALL`,
//! `LC_COLLATE` and `LANG` that is set and not empty. `C`, `POSIX` and `C.<codeset>` (such as
//! `C.UTF-8`, whose collation is code point order, the same as UTF-8's byte order) collate as
//! bytes and draw no warning. Records never warn: their keys are bytes or typed numbers by
//! definition. `XSORT_NO_LOCALE_WARNING=1` silences it.

use xsort_core::order::LineOrder;

/// The variable that silences the warning (any value but empty or `0`).
pub const SILENCE: &str = "XSORT_NO_LOCALE_WARNING";

/// The warning (after "xsort: warning: ") for a sort of lines in `order` under the environment
/// `env` (a variable's value by name), or None when the result is what the locale would give.
pub fn warning(order: &LineOrder, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    if env(SILENCE).is_some_and(|v| !v.is_empty() && v != "0") || !order.collates_text() {
        return None;
    }
    let (var, name) = ["LC_ALL", "LC_COLLATE", "LANG"].into_iter().find_map(|var| env(var).filter(|v| !v.is_empty()).map(|v| (var, v)))?;
    if name == "C" || name == "POSIX" || name.starts_with("C.") {
        return None;
    }
    Some(format!(
        "{var}={name} asks for that locale's collation, but xsort compares text byte by byte, as 'LC_ALL=C sort' does ({SILENCE}=1 silences this)"
    ))
}

/// [`warning`] for this process's environment.
pub fn warning_here(order: &LineOrder) -> Option<String> {
    warning(order, |var| std::env::var_os(var).map(|v| v.to_string_lossy().into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use xsort_core::order::{KeyField, LineOrderConfig, OrderFlags};

    fn order(keys: &[&str], global: &str, stable: bool, unique: bool) -> LineOrder {
        let mut flags = OrderFlags::default();
        global.chars().for_each(|c| {
            flags.set_global(c);
        });
        let keys = keys.iter().map(|k| KeyField::parse(k).expect("key")).collect();
        LineOrder::new(LineOrderConfig { keys, global: flags, stable, unique, random_seed: vec![0; 16], ..Default::default() })
            .expect("order")
    }

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn gnu_precedence_picks_the_collation_locale() {
        let text = order(&[], "", false, false);
        let w = warning(&text, env(&[("LANG", "en_US.UTF-8")])).expect("warns");
        assert!(w.starts_with("LANG=en_US.UTF-8 asks for that locale's collation"), "{w}");
        let w = warning(&text, env(&[("LANG", "C"), ("LC_COLLATE", "de_DE.UTF-8")])).expect("warns");
        assert!(w.starts_with("LC_COLLATE=de_DE.UTF-8 "), "{w}");
        // LC_ALL wins over both; an empty value counts as unset.
        assert_eq!(warning(&text, env(&[("LC_ALL", "C"), ("LC_COLLATE", "de_DE.UTF-8"), ("LANG", "fr_FR")])), None);
        let w = warning(&text, env(&[("LC_ALL", ""), ("LC_COLLATE", ""), ("LANG", "fr_FR")])).expect("warns");
        assert!(w.starts_with("LANG=fr_FR "), "{w}");
        for byte_order in ["C", "POSIX", "C.UTF-8", "C.utf8"] {
            assert_eq!(warning(&text, env(&[("LANG", byte_order)])), None, "{byte_order}");
        }
        assert_eq!(warning(&text, env(&[])), None, "no locale at all is C");
        assert_eq!(warning(&text, env(&[("LANG", "en_US.UTF-8"), (SILENCE, "1")])), None);
        assert!(warning(&text, env(&[("LANG", "en_US.UTF-8"), (SILENCE, "0")])).is_some());
    }

    #[test]
    fn only_orders_that_compare_text_warn() {
        let e = [("LANG", "en_US.UTF-8")];
        let warns =
            |keys: &[&str], global: &str, stable: bool, unique: bool| warning(&order(keys, global, stable, unique), env(&e)).is_some();
        assert!(warns(&[], "", false, false), "whole lines");
        assert!(warns(&["2,2"], "", true, false), "a text key");
        assert!(warns(&["2,2", "1,1n"], "", true, false), "one text key among numeric ones");
        assert!(warns(&["1,1f"], "", true, false), "folded text is still text");
        assert!(warns(&["1,1"], "R", true, false), "-R hashes the collated key in GNU");
        // Numeric keys alone still leave ties to the last-resort comparison of whole lines...
        assert!(warns(&[], "n", false, false));
        assert!(warns(&["1,1n", "2,2g"], "", false, false));
        // ...unless -s or -u turns it off: then nothing compares text.
        for global in ["n", "g", "h", "M", "V"] {
            assert!(!warns(&[], global, true, false), "-s{global}");
            assert!(!warns(&[], global, false, true), "-u{global}");
        }
        assert!(!warns(&["1,1n", "2,2V"], "", true, false));
    }
}
