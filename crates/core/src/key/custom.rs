//! Comparisons a program supplies for key parts: Nsort's `compare=NAME`, named beforehand with
//! `nsort_declare_function` (or [`declare_comparison`] from Rust).
//!
//! As in Nsort the names live in one table for the whole process. A key part compared by a
//! function has no normalized form, so the normalized key stops before it: entries hold the
//! prefix of the parts before it (nothing, when it comes first), and records that tie there are
//! put in order by comparing them, each comparison calling the function with the two parts' bytes
//! (see `ResolvedKey::is_complete`).
//!
//! A function may fail (Nsort's `nsort_raise_error`): the first failure is kept, the sort's
//! cancel flag is set so that it stops at its next look, and the sort then fails with
//! [`crate::SortError::Comparison`] rather than as cancelled. Comparisons after a failure count
//! records as equal.

use std::cmp::Ordering;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering as Atomic};
use std::sync::{Arc, OnceLock, RwLock};

/// A comparison of two values (a key part's bytes in two records): their order, or a message
/// saying why they could not be compared.
pub type CompareFn = dyn Fn(&[u8], &[u8]) -> Result<Ordering, String> + Send + Sync;

/// The declared comparisons, in the order declared (a [`ComparisonId`] is an index here): a name
/// declared again is added again, so that what was defined with it keeps its function.
static DECLARED: RwLock<Vec<(String, Arc<CompareFn>)>> = RwLock::new(Vec::new());

/// A declared comparison, by its place in the process's table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ComparisonId(usize);

impl ComparisonId {
    /// The name it was declared with.
    pub fn name(self) -> String {
        table().get(self.0).map_or_else(String::new, |(name, _)| name.clone())
    }

    /// Its function.
    fn function(self) -> Arc<CompareFn> {
        table()[self.0].1.clone()
    }
}

fn table() -> std::sync::RwLockReadGuard<'static, Vec<(String, Arc<CompareFn>)>> {
    // A panic while the lock was held left the table whole (every write is one push).
    DECLARED.read().unwrap_or_else(|e| e.into_inner())
}

/// Declares `f` under `name` for the keys and fields of later sorts (`compare=NAME` in Nsort
/// statements, or [`crate::KeyType::Custom`]). Declaring a name again gives it `f` for the sorts
/// defined after that; those defined before keep the function they named. The name is a word of
/// letters, digits and `_`, not starting with a digit; anything else is refused with a message
/// saying so.
pub fn declare_comparison(name: &str, f: Arc<CompareFn>) -> Result<ComparisonId, String> {
    let word = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !word {
        return Err(format!("invalid comparison name '{name}': a name is letters, digits and '_', not starting with a digit"));
    }
    let mut declared = DECLARED.write().unwrap_or_else(|e| e.into_inner());
    declared.push((name.to_string(), f));
    Ok(ComparisonId(declared.len() - 1))
}

/// The comparison last declared as `name`, if any.
pub fn declared_comparison(name: &str) -> Option<ComparisonId> {
    table().iter().rposition(|(n, _)| n == name).map(ComparisonId)
}

/// The functions of one resolved key's compared parts, and where a failure goes. Clones of the
/// key share it.
pub(super) struct Comparisons {
    functions: Vec<(ComparisonId, Arc<CompareFn>)>,
    failure: OnceLock<String>,
    cancel: OnceLock<Arc<AtomicBool>>,
}

impl fmt::Debug for Comparisons {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.functions.iter().map(|(id, _)| id.name()).collect();
        f.debug_struct("Comparisons").field("names", &names).field("failure", &self.failure.get()).finish()
    }
}

impl Comparisons {
    /// The functions of `ids`.
    pub(super) fn new(ids: &[ComparisonId]) -> Comparisons {
        let functions = ids.iter().map(|&id| (id, id.function())).collect();
        Comparisons { functions, failure: OnceLock::new(), cancel: OnceLock::new() }
    }

    /// Compares two values with the `slot`th function; a failure is kept and counts as equal, as
    /// does every comparison after it (the function is not called again).
    #[inline]
    pub(super) fn compare(&self, slot: usize, a: &[u8], b: &[u8]) -> Ordering {
        if self.failure.get().is_some() {
            return Ordering::Equal;
        }
        let (id, f) = &self.functions[slot];
        f(a, b).unwrap_or_else(|message| {
            if self.failure.set(format!("the comparison function '{}' failed: {message}", id.name())).is_ok() {
                if let Some(flag) = self.cancel.get() {
                    flag.store(true, Atomic::Relaxed);
                }
            }
            Ordering::Equal
        })
    }

    /// Sets `flag` when a comparison fails (at once, if one has).
    pub(super) fn cancel_on_failure(&self, flag: Arc<AtomicBool>) {
        if self.failure.get().is_some() {
            flag.store(true, Atomic::Relaxed);
        }
        let _ = self.cancel.set(flag);
    }

    /// The first failure's message.
    pub(super) fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }
}
