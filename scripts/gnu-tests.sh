#!/usr/bin/env bash
# Runs GNU coreutils 9.1's own tests of `sort` against xsort: tests/misc/sort*.pl through
# coreutils' Perl harness and tests/misc/sort*.sh through its shell harness, with `sort` a copy of
# xsort (so messages start with "sort:", as xsort names itself by argv[0]), built with the cargo
# profile $XSORT_CARGO_PROFILE (default release).
# Prints each test file's result (pass, FAIL, or skip with the harness's reason) and a summary;
# exits 1 when one failed.
#
#   scripts/gnu-tests.sh [TEST...]        (default: every sort test; e.g. sort.pl sort-merge.pl)
#
# The coreutils source comes from Debian's source package, fetched once into target/gnu-tests
# (`apt-get source --download-only coreutils`: needs a deb-src line in APT's sources). `getlimits`,
# a helper program the tests call, is replaced by scripts/gnu-tests-getlimits (the same NAME=VALUE
# lines for the limits of this platform). The tests run in the C locale, in a work directory under
# the temp directory (removed at the end; the logs stay in target/gnu-tests/run), as the user
# nobody when run as root (as GNU's suite runs: sort-exit-early.sh
# needs a user that permissions bind), expensive ones included. The French locales the tests use
# (LOCALE_FR, LOCALE_FR_UTF8, as configure finds them) are fr_FR.ISO-8859-1 and fr_FR.UTF-8 when
# installed (scripts/prerequisites.sh generates them); a test that needs a locale or a program
# this machine lacks skips itself as the harness decides, and is reported as skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/target/gnu-tests
src=$work/coreutils-9.1
if [[ ! -d $src ]]; then
  mkdir -p "$work"
  (cd "$work" && apt-get source --download-only coreutils=9.1-1 > /dev/null) || {
    echo "gnu-tests.sh: cannot fetch coreutils' source: APT needs a deb-src line, e.g. in /etc/apt/sources.list.d/src.list:" >&2
    echo "  deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" >&2
    exit 2
  }
  tar -C "$work" -xf "$work/coreutils_9.1.orig.tar.xz"
fi
profile=${XSORT_CARGO_PROFILE:-release}
cargo build --profile "$profile" --quiet --manifest-path "$root/Cargo.toml" -p xsort
# The tests run in a directory of their own under the temp directory, open to every user (the
# checkout's directories may not be), with copies of the sources, the program and the helpers.
stage=$(mktemp -d "${TMPDIR:-/tmp}/xsort-gnu-tests.XXXXXX")
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
cp -a "$src" "$stage/coreutils" && src=$stage/coreutils
build=$stage/build
mkdir -p "$build/src" "$work/run"
cp "$root/target/$profile/xsort" "$build/src/sort"
cp "$root/scripts/gnu-tests-getlimits" "$build/src/getlimits"
ln -s "$(type -P printf)" "$build/src/printf"
# What configure would have found: the tests that check for threads read it here.
echo '#define HAVE_PTHREAD_T 1' > "$build/config.h"
if [[ $# -gt 0 ]]; then
  tests=("$@")
else
  tests=()
  for t in "$src"/tests/misc/sort*.pl "$src"/tests/misc/sort*.sh; do tests+=("$(basename "$t")"); done
  # The tests of every program, run here for sort alone.
  tests+=(invalid-opt.pl help-version.sh usage_vs_getopt.sh)
fi
# The French locales, under the names configure would give them ("none" when missing).
installed_locales=$(locale -a 2>/dev/null || true)
locale_fr=none locale_fr_utf8=none
grep -qx fr_FR.iso88591 <<<"$installed_locales" && locale_fr=fr_FR.ISO-8859-1
grep -qx fr_FR.utf8 <<<"$installed_locales" && locale_fr_utf8=fr_FR.UTF-8
# sort-h-thousands-sep.sh wants the Swedish locale of glibc before 2.35, whose thousands separator
# was a space (now U+202F, a no-break space in ISO-8859-1): made from the installed definition in
# a directory of the tests' own, which LOCPATH names to glibc (the system's locales stay as they are).
locales=$stage/locales
if [[ -f /usr/share/i18n/locales/sv_SE ]]; then
  mkdir -p "$locales"
  sed '/^LC_NUMERIC/,/^END LC_NUMERIC/s/^thousands_sep.*/thousands_sep "<U0020>"/' /usr/share/i18n/locales/sv_SE > "$locales/sv_SE.src"
  localedef -i "$locales/sv_SE.src" -f ISO-8859-1 "$locales/sv_SE" || echo "gnu-tests.sh: cannot make the old Swedish locale" >&2
fi
# As root, the tests run as nobody, in work directories nobody owns.
as_user=()
if [[ $(id -u) -eq 0 ]]; then
  as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
# help-version.sh checks that the program run is the one built: the version it is to print.
version=$("$build/src/sort" --version | sed -n '1s/.* //p;q')
pass=0 failed=() skipped=0
for t in "${tests[@]}"; do
  dir=$stage/run/${t%.*}
  mkdir -p "$dir/misc"
  [[ ${#as_user[@]} -eq 0 ]] || chown -R nobody "$dir"
  log=$work/run/$t.log
  # sort-debug-keys.sh also runs printf (GNU's); the other tests run only sort.
  programs=sort
  [[ $t == sort-debug-keys.sh ]] && programs="sort printf"
  # What both harnesses read: the programs, the locales, expensive tests on, the C locale, and the
  # shell that scripts the tests write start with (as make sets it; without it, bash run as nobody
  # would take nobody's login shell, nologin).
  common=(env PATH="$build/src:$PATH" SHELL="$(type -P bash)" srcdir="$src" built_programs="$programs" LOCALE_FR="$locale_fr"
    LOCALE_FR_UTF8="$locale_fr_utf8" RUN_EXPENSIVE_TESTS=yes RUN_VERY_EXPENSIVE_TESTS=yes LC_ALL=C)
  [[ $t == sort-h-thousands-sep.sh ]] && common+=(LOCPATH="$locales")
  set +e
  case $t in
    *.pl)
      (cd "$dir" && "${as_user[@]}" "${common[@]}" \
        perl -w -I"$src/tests" -MCuSkip -MCoreutils "-MCuTmpdir qw(misc/$t)" -- "$src/tests/misc/$t") > "$log" 2>&1 ;;
    *.sh)
      (cd "$dir" && "${as_user[@]}" "${common[@]}" abs_top_builddir="$build" abs_top_srcdir="$src" abs_srcdir="$src/tests" \
        VERSION="$version" CONFIG_HEADER="$build/config.h" bash "$src/tests/misc/$t") > "$log" 2>&1 ;;
  esac
  rc=$?
  set -e
  case $rc in
    0) pass=$((pass + 1)); echo "pass  $t" ;;
    77) skipped=$((skipped + 1)); echo "skip  $t: $(grep -m1 -i 'skip' "$log" | cut -c1-100)" ;;
    *) failed+=("$t"); echo "FAIL  $t (exit status $rc; its output: $log, which ends:)"
       tail -n 15 "$log" | sed 's/^/    /' ;;
  esac
done
echo "gnu-tests: ${#tests[@]} test files: $pass passed, ${#failed[@]} failed, $skipped skipped"
[[ ${#failed[@]} -eq 0 ]]
