#!/usr/bin/env bash
# Runs GNU coreutils 9.1's own tests of `sort` against xsort: tests/misc/sort*.pl through
# coreutils' Perl harness and tests/misc/sort*.sh through its shell harness, with `sort` a symbolic
# link to target/release/xsort (so messages start with "sort:", as xsort names itself by argv[0]).
# Prints each test file's result (pass, FAIL, or skip with the harness's reason) and a summary;
# exits 1 when one failed.
#
#   scripts/gnu-tests.sh [TEST...]        (default: every sort test; e.g. sort.pl sort-merge.pl)
#
# The coreutils source comes from Debian's source package, fetched once into target/gnu-tests
# (`apt-get source --download-only coreutils`: needs a deb-src line in APT's sources). `getlimits`,
# a helper program the tests call, is replaced by scripts/gnu-tests-getlimits (the same NAME=VALUE
# lines for the limits of this platform). The tests run in the C locale, in work directories under
# target/gnu-tests. Expensive tests (RUN_EXPENSIVE_TESTS) and those that need valgrind or a
# particular locale skip themselves as the harness decides.
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
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort
build=$work/build
rm -rf "$build" && mkdir -p "$build/src"
ln -s "$root/target/release/xsort" "$build/src/sort"
ln -s "$root/scripts/gnu-tests-getlimits" "$build/src/getlimits"
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
# help-version.sh checks that the program run is the one built: the version it is to print.
version=$("$build/src/sort" --version | sed -n '1s/.* //p;q')
pass=0 failed=() skipped=0
for t in "${tests[@]}"; do
  dir=$work/run/${t%.*}
  rm -rf "$dir" && mkdir -p "$dir/misc"
  log=$work/run/$t.log
  # sort-debug-keys.sh also runs printf (GNU's); the other tests run only sort.
  programs=sort
  [[ $t == sort-debug-keys.sh ]] && programs="sort printf"
  set +e
  case $t in
    *.pl)
      (cd "$dir" && env PATH="$build/src:$PATH" srcdir="$src" built_programs="$programs" RUN_EXPENSIVE_TESTS=yes RUN_VERY_EXPENSIVE_TESTS=yes LC_ALL=C \
        perl -w -I"$src/tests" -MCuSkip -MCoreutils "-MCuTmpdir qw(misc/$t)" -- "$src/tests/misc/$t") > "$log" 2>&1 ;;
    *.sh)
      (cd "$dir" && env abs_top_builddir="$build" abs_top_srcdir="$src" abs_srcdir="$src/tests" srcdir="$src" \
        built_programs="$programs" VERSION="$version" CONFIG_HEADER="$build/config.h" RUN_EXPENSIVE_TESTS=yes RUN_VERY_EXPENSIVE_TESTS=yes \
        PATH="$build/src:$PATH" LC_ALL=C bash "$src/tests/misc/$t") > "$log" 2>&1 ;;
  esac
  rc=$?
  set -e
  case $rc in
    0) pass=$((pass + 1)); echo "pass  $t" ;;
    77) skipped=$((skipped + 1)); echo "skip  $t: $(grep -m1 -i 'skip' "$log" | cut -c1-100)" ;;
    *) failed+=("$t"); echo "FAIL  $t (exit status $rc; its output: $log)" ;;
  esac
done
echo "gnu-tests: ${#tests[@]} test files: $pass passed, ${#failed[@]} failed, $skipped skipped"
[[ ${#failed[@]} -eq 0 ]]
