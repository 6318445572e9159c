//! `--debug`: GNU sort 9.1's option warnings (key_warnings) and per-line key annotations
//! (debug_key), in the order's locale (GNU's English messages: a translated GNU says them in the
//! locale's language).

use super::keydef::{begfield, limfield};
use super::{general, numeric, Ignore, Key, LineOrder, OrderFlags, BLANK, NONE};

/// The warnings GNU prints to stderr before sorting, without the "sort: " prefix.
pub(crate) fn warnings(order: &LineOrder) -> Vec<String> {
    let locale = &order.locale;
    let mut out = Vec::new();
    if locale.failed() {
        out.push("failed to set locale".to_string());
    }
    out.push(if locale.hard_collation() {
        format!("text ordering performed using {} sorting rules", locale.quote(locale.name().as_bytes()))
    } else {
        "text ordering performed using simple byte comparison".to_string()
    });
    let mut numbers = Numbers::default();
    for (i, key) in order.keys.iter().enumerate() {
        key_warnings(order, i + 1, key, &mut numbers, &mut out);
    }
    number_warnings(order, numbers, &mut out);
    ignored_global_options(order, &mut out);
    out
}

/// Which kinds of numeric keys the order has, and whether any spans fields.
#[derive(Default)]
struct Numbers {
    basic: bool,
    general: bool,
    basic_span: bool,
    general_span: bool,
}

/// The warnings of key number `keynum`: an obsolescent form, zero width, significant blanks, a
/// numeric key across fields (noted in `numbers`).
fn key_warnings(order: &LineOrder, keynum: usize, key: &Key, numbers: &mut Numbers, out: &mut Vec<String>) {
    let f = &key.flags;
    if f.is_numeric() {
        if f.general_numeric {
            numbers.general = true;
        } else {
            numbers.basic = true;
        }
    }
    if key.obsolete {
        let sword = if key.sword == NONE { 0 } else { key.sword };
        let mut old = format!("+{sword}");
        let mut new = format!("-k {}", sword as u128 + 1);
        if key.eword != NONE {
            old.push_str(&format!(" -{}", key.eword as u128 + 1));
            new.push_str(&format!(",{}", key.eword as u128 + 1 + (key.echar == NONE) as u128));
        }
        let quote = |s: &str| order.locale.quote(s.as_bytes());
        out.push(format!("obsolescent key {} used; consider {} instead", quote(&old), quote(&new)));
    }
    let zero_width = key.sword != NONE && key.eword < key.sword;
    if zero_width {
        out.push(format!("key {keynum} has zero width and will be ignored"));
    }
    let implicit_skip = f.is_numeric() || f.month;
    let line_offset = key.eword == 0 && key.echar != 0;
    if !zero_width
        && !order.gkey_only
        && order.tab.is_none()
        && !line_offset
        && ((!f.blank_start && (!implicit_skip || key.schar != 0)) || (!f.blank_end && key.echar != 0))
    {
        out.push(format!("leading blanks are significant in key {keynum}; consider also specifying 'b'"));
    }
    if !order.gkey_only && f.is_numeric() {
        let sword = key.sword.wrapping_add(1).max(1);
        let eword = key.eword.wrapping_add(1);
        if eword == 0 || sword < eword {
            out.push(format!("key {keynum} is numeric and spans multiple fields"));
            if f.general_numeric {
                numbers.general_span = true;
            } else {
                numbers.basic_span = true;
            }
        }
    }
}

/// The warnings about numbers: a field separator that numbers read as part of them, the decimal
/// point, and a thousands separator GNU does not read.
fn number_warnings(order: &LineOrder, numbers: Numbers, out: &mut Vec<String>) {
    let n = order.locale.numbers();
    let quote = |c: u8| order.locale.quote(&[c]);
    let blank = |c: u8| c == b' ' || c == b'\t';
    let mut number_locale_warned = false;
    if numbers.basic_span {
        if let Some(g) = n.unit_group.filter(|&g| order.tab.map_or(blank(g), |t| t == g)) {
            out.push(format!("field separator {} is treated as a group separator in numbers", quote(g)));
            number_locale_warned = true;
        }
    }
    if numbers.basic_span || numbers.general_span {
        let point = n.decimal;
        if order.tab.map_or(n.unit_group.is_some() && blank(point), |t| t == point) {
            out.push(format!("field separator {} is treated as a decimal point in numbers", quote(point)));
            number_locale_warned = true;
        } else if order.tab == Some(b'-') {
            out.push(format!("field separator {} is treated as a minus sign in numbers", quote(b'-')));
        } else if numbers.general_span && order.tab == Some(b'+') {
            out.push(format!("field separator {} is treated as a plus sign in numbers", quote(b'+')));
        }
    }
    if (numbers.basic || numbers.general) && !number_locale_warned {
        let note = if order.tab == Some(n.decimal) { "" } else { "note " };
        out.push(format!("{note}numbers use {} as a decimal point in this locale", quote(n.decimal)));
    }
    if numbers.basic && n.group_ignored {
        out.push("the multi-byte number group separator in this locale is not supported".to_string());
    }
}

/// The warnings about global options that no key inherits (every key has options of its own), as
/// GNU words them.
fn ignored_global_options(order: &LineOrder, out: &mut Vec<String>) {
    let mut ugkey: OrderFlags = order.global;
    let mut ug_ignore = ugkey.ignore();
    for f in order.keys.iter().map(|k| &k.flags) {
        if ug_ignore != Ignore::None && ug_ignore == f.ignore() {
            ug_ignore = Ignore::None;
        }
        if ugkey.fold && f.fold {
            ugkey.fold = false;
        }
        ugkey.blank_start &= !f.blank_start;
        ugkey.blank_end &= !f.blank_end;
        ugkey.month &= !f.month;
        ugkey.numeric &= !f.numeric;
        ugkey.general_numeric &= !f.general_numeric;
        ugkey.human_numeric &= !f.human_numeric;
        ugkey.random &= !f.random;
        ugkey.version &= !f.version;
        ugkey.reverse &= !f.reverse;
    }
    ugkey.dictionary = ug_ignore == Ignore::NonDictionary;
    ugkey.nonprinting = ug_ignore == Ignore::NonPrinting;

    let stable_or_unique = order.stable || order.unique;
    let has_keys = !order.keys.is_empty();
    if !ugkey.is_default_compare() || (ugkey.reverse && stable_or_unique && has_keys) {
        let mut shown = ugkey;
        if !stable_or_unique {
            shown.reverse = false;
        }
        let opts = shown.letters();
        if opts.len() == 1 {
            out.push(format!("option '-{opts}' is ignored"));
        } else {
            out.push(format!("options '-{opts}' are ignored"));
        }
    }
    if ugkey.reverse && !stable_or_unique && has_keys {
        out.push("option '-r' only applies to last-resort comparison".to_string());
    }
}

/// GNU's debug_key: the span of `line` a key (or, for `None`, the last resort) looks at.
fn key_span(order: &LineOrder, line: &[u8], key: Option<&Key>) -> (usize, usize) {
    let mut beg = 0;
    let mut lim = line.len();
    let Some(key) = key else { return (beg, lim) };
    if key.sword != NONE {
        beg = begfield(line, key, order.tab);
    }
    if key.eword != NONE {
        lim = limfield(line, key, order.tab);
    }
    let f = &key.flags;
    if (f.blank_start && key.sword == NONE) || f.month || f.is_numeric() {
        // GNU puts a NUL at `lim` and skips blanks from `beg`: the skip stops at `lim` when
        // beg <= lim, else at the line's end.
        let stop = if beg <= lim { lim } else { line.len() };
        while beg < stop && BLANK[line[beg] as usize] {
            beg += 1;
        }
        let tighter = if lim < beg {
            lim
        } else {
            let text = &line[beg..lim];
            if f.month {
                let (m, end) = order.locale.month_at(text);
                if m != 0 {
                    beg + end
                } else {
                    beg
                }
            } else if f.general_numeric {
                beg + general::general_end(text, &order.locale)
            } else if f.numeric || f.human_numeric {
                let neg = text.first() == Some(&b'-');
                let (max_digit, end) = numeric::traverse_raw_number(text, neg as usize, order.locale.numbers());
                if max_digit >= b'0' {
                    let unit = text.get(end).is_some_and(|&c| numeric::unit_order(c) != 0);
                    beg + end + (f.human_numeric && unit) as usize
                } else {
                    beg
                }
            } else {
                lim
            }
        };
        lim = tighter;
    }
    (beg, lim)
}

/// Appends GNU's --debug output for one line.
pub(crate) fn annotate(order: &LineOrder, line: &[u8], out: &mut Vec<u8>) {
    out.extend(line.iter().map(|&c| if c == b'\t' { b'>' } else { c }));
    out.push(b'\n');
    let mut mark = |key: Option<&Key>| {
        let (beg, lim) = key_span(order, line, key);
        let offset = order.locale.debug_width(&line[..beg.min(line.len())]);
        let w = if lim < beg { 0 } else { order.locale.debug_width(&line[beg..lim]) };
        out.resize(out.len() + offset, b' ');
        if w == 0 {
            out.extend_from_slice(b"^ no match for key\n");
        } else {
            out.resize(out.len() + w, b'_');
            out.push(b'\n');
        }
    };
    for key in &order.keys {
        mark(Some(key));
    }
    if order.keys.is_empty() || !(order.unique || order.stable) {
        mark(None);
    }
}
