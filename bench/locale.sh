#!/usr/bin/env bash
# Lines of UTF-8 words sorted in a locale (default en_US.UTF-8): xsort against GNU sort in the
# same locale, and against the floor the C library's collation sets; ratios measured in one run.
#
#   bash bench/locale.sh [--lines N] [--locale NAME] [--dir DIR] [--runs K] [--xsort PATH]
#
# N lines (default 10^7; `bench/locale_gen.py`, seeded: one to three words of syllables with
# accented letters, mixed case, now and then punctuation and digits, about 14 bytes a line) in DIR
# (default $TMPDIR or /tmp), K runs each (default 3), medians reported; the input is read into the
# page cache before each run, outputs go to new files in DIR. Cases:
#   xsort      `LC_ALL=NAME xsort -o OUT IN`
#   gnu        `LC_ALL=NAME sort --parallel=CORES -S 50% -o OUT IN`   (target: xsort at least 8x faster)
#   floor      bench/c/collate_floor.c on CORES threads: strxfrm of every line once, and strcoll of
#              each line of the sorted output with the next: what the C library's collation costs
#              a sort that summarizes each line once and confirms the order, before any sorting
#   bytes      for context, xsort in the C locale: `LC_ALL=C xsort -o OUT IN`
#   gnu-bytes  for context, GNU sort in the C locale
# xsort's output must equal GNU's byte for byte in both locales. --xsort PATH times that binary
# instead of building target/release/xsort. The locale must be installed (scripts/prerequisites.sh
# makes en_US.UTF-8, de_DE.UTF-8 and sv_SE.UTF-8). Generated files are deleted at the end; the
# script exits with 1 if a run failed or an output differs.
set -euo pipefail
lines=10000000 locale=en_US.UTF-8 dir=${TMPDIR:-/tmp} runs=3 xsort=
usage="usage: $0 [--lines N] [--locale NAME] [--dir DIR] [--runs K] [--xsort PATH]"
while [[ $# -gt 0 ]]; do
  case $1 in
    --lines) lines=$2; shift 2 ;;
    --locale) locale=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --xsort) xsort=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/common.sh"
if [[ -z $xsort ]]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort
  xsort=$root/target/release/xsort
fi
work=$(mktemp -d "$dir/xsort-locale.XXXXXX")
trap 'rm -rf "$work"' EXIT
in=$work/in.txt cores=$(nproc)
cc -O2 -pthread -o "$work/collate_floor" "$root/bench/c/collate_floor.c"
LC_ALL=$locale "$work/collate_floor" 1 /dev/null /dev/null > /dev/null 2>&1 || { echo "FAILED: the locale $locale is not installed" >&2; exit 1; }

echo "# Lines of UTF-8 words in $locale: xsort vs GNU sort and the collation floor, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
machine_context "$dir" "$work"
echo "- xsort $(git -C "$root" describe --always --dirty 2> /dev/null || echo unknown) ($xsort); $(sort --version | head -1); $(ldd --version | head -1)"
t0=$(now)
python3 "$root/bench/locale_gen.py" "$in" "$lines"
echo "- input: $(stat -c %s "$in") bytes, $lines lines, made by bench/locale_gen.py in $(secs "$(now) - $t0") s"
echo "- $runs runs each, medians; the input in the page cache, outputs to new files in $dir"
echo

# K runs of COMMAND (after removing OUT and reading the input into the page cache); prints the
# median wall seconds, or fails at the first failed run, its standard error kept in $work/err.
time_runs() { # OUT COMMAND...
  local out=$1 t=() i t0; shift
  for i in $(seq "$runs"); do
    rm -f "$out"; sync; cat "$in" > /dev/null
    t0=$(now)
    "$@" 2>> "$work/err" || return
    t+=("$(secs "$(now) - $t0")")
  done
  echo "${t[*]}" | median
}
failed=()
timed_case() { # NAME OUT COMMAND...
  local name=$1 s; shift
  echo "timing $name" >&2
  if s=$(time_runs "$@"); then echo "$s"; else failed+=("$name: $(head -c 600 "$work/err")"); echo FAILED; fi
}
x=$(timed_case xsort "$work/x.out" env LC_ALL="$locale" "$xsort" -o "$work/x.out" "$in")
g=$(timed_case gnu "$work/g.out" env LC_ALL="$locale" sort --parallel="$cores" -S 50% -o "$work/g.out" "$in")
xb=$(timed_case bytes "$work/xb.out" env LC_ALL=C "$xsort" -o "$work/xb.out" "$in")
gb=$(timed_case gnu-bytes "$work/gb.out" env LC_ALL=C sort --parallel="$cores" -S 50% -o "$work/gb.out" "$in")
echo "timing floor" >&2
floor_json=$(LC_ALL=$locale "$work/collate_floor" "$cores" "$in" "$work/g.out") || failed+=("floor: $floor_json")
xfrm=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['strxfrm_s'])" "$floor_json" 2> /dev/null || echo FAILED)
coll=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['strcoll_s'])" "$floor_json" 2> /dev/null || echo FAILED)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
cmp -s "$work/x.out" "$work/g.out" || failed+=("xsort's output in $locale is not GNU's byte for byte")
cmp -s "$work/xb.out" "$work/gb.out" || failed+=("xsort's output in the C locale is not GNU's byte for byte")

num() { [[ $1 =~ ^[0-9.]+$ ]]; }
over() { if num "$1" && num "$2"; then echo "$(ratio "$1" "$2")x"; else echo -; fi; }
echo "| case | command | s | / xsort |"
echo "|---|---|---|---|"
echo "| xsort, $locale | \`LC_ALL=$locale xsort -o OUT IN\` | $x | |"
echo "| GNU sort, $locale | \`LC_ALL=$locale sort --parallel=$cores -S 50% -o OUT IN\` | $g | $(over "$g" "$x") |"
echo "| collation floor: strxfrm of every line | bench/c/collate_floor.c, $cores threads | $xfrm | $(over "$xfrm" "$x") |"
echo "| collation floor: strcoll of each sorted line with the next | bench/c/collate_floor.c, $cores threads | $coll | $(over "$coll" "$x") |"
echo "| xsort, C locale (context) | \`LC_ALL=C xsort -o OUT IN\` | $xb | $(over "$xb" "$x") |"
echo "| GNU sort, C locale (context) | \`LC_ALL=C sort --parallel=$cores -S 50% -o OUT IN\` | $gb | $(over "$gb" "$x") |"
echo
if num "$g" && num "$x"; then
  if python3 -c "import sys; sys.exit(0 if $g / $x >= 8 else 1)"; then met=met; else met=MISSED; fi
  echo "- GNU sort / xsort in $locale: $(ratio "$g" "$x")x (target at least 8x: $met)"
fi
if num "$xfrm" && num "$coll" && num "$x" && num "$xb"; then
  floor=$(python3 -c "print(f'{$xfrm + $coll + $xb:.3f}')")
  echo "- floor: the collation's share ($xfrm s + $coll s) plus xsort's sort of the same lines by bytes ($xb s) = $floor s; xsort / floor: $(ratio "$x" "$floor")x"
  if num "$g"; then echo "- GNU sort / floor: $(ratio "$g" "$floor")x (the most a sort paying that floor could beat GNU sort by here)"; fi
fi
echo "- load average after the timed runs: $load_after"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo
  for f in "${failed[@]}"; do echo "FAILED: $f"; done
  exit 1
fi
echo "- outputs: xsort's equal GNU's byte for byte, in $locale and in the C locale"
