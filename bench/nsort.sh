#!/usr/bin/env bash
# Nsort statements at the speed of xsort's plain sorts: record selection, reformatting and
# separated records, each as a ratio against a sort timed in the same run on this machine.
#
#   bash bench/nsort.sh [--records N] [--size BYTES] [--dir DIR] [--runs K]
#
# 1. Selection. N gensort records (default 10^7 = 1 GB), sorted on their 10-byte key
#      plain:     xsort --spec '-format=size:100 -field=name:key,size:10 -key=key' -o OUT IN
#      selected:  the same with -field=name:first,size:1,off:0 -include=(first lt x'80')
#    gensort keys are random bytes, so about half the records are kept. Target: selected / plain
#    at most 0.6. Checks: the plain output with valsort (sorted, the input's checksum); the
#    selected one sorted (valsort), 45% to 55% of the records (valsort's "Records:"), and exactly
#    the plain output's records whose first byte is below 0x80 (its prefix, byte for byte).
# 2. Reformat. The same input, -field=name:key,size:10 -field=name:half,size:40,off:10 -key=key
#    -reformat=key,half (50 of the 100 bytes written). Target: reformat / plain at most 1.0.
#    Checks: the output is 50 x N bytes, its 10-byte keys are in order, and it is the plain
#    output's records cut to their first 50 bytes.
# 3. Separated records. A CSV-like text file of BYTES bytes (default 10^9; four comma-separated
#    fields a line, about 22 million lines: a line number, a name, a random word or number, a
#    random payload; seeded, made by Python) sorted on its third field by
#      GNU:         LC_ALL=C sort -t, -k3,3 IN -o OUT         (GNU's defaults: no -S, --parallel)
#      xsort lines: xsort -t, -k3,3 -o OUT IN
#      spec:        xsort --spec "-format=separator:comma -key=position:3" -o OUT IN
#    Targets: GNU / spec at least 8, spec / xsort lines at most 1.2. Checks: xsort's line sort is
#    GNU's output byte for byte; the spec output is in the order of `sort -c -s -t, -k3,3` with
#    the input's line and byte counts. GNU runs once only if its first run takes over 60 s.
#
# Each command runs once untimed first (the page cache warm, the binary loaded), then K times
# (default 3), the cases of a part interleaved, each run writing a new output file in DIR (default
# $XSORT_BENCH_DIR or /tmp) after a sync; medians are reported. A summary block at the end gives
# the machine context and each figure against its target. Generated files are deleted at the end;
# the script exits with 1 when a check fails. Run it on a quiet machine (`uptime`: load < 1.5).
set -euo pipefail
records=10000000 size=1000000000 dir=${XSORT_BENCH_DIR:-/tmp} runs=3
usage="usage: $0 [--records N] [--size BYTES] [--dir DIR] [--runs K]"
while [[ $# -gt 0 ]]; do
  case $1 in
    --records) records=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/common.sh"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort -p xsort-sortbench
bin=$root/target/release xsort=$root/target/release/xsort
work=$(mktemp -d "$dir/xsort-nsort.XXXXXX")
trap 'rm -rf "$work"' EXIT
in=$work/in

fail() { echo "FAILED: $*" >&2; exit 1; }
# Prints "met" when the python expression holds, "MISSED" otherwise.
verdict() { if python3 -c "import sys; sys.exit(0 if $1 else 1)"; then echo met; else echo MISSED; fi; }

echo "# Nsort statements: selection, reformat, separated records, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
context=$(machine_context "$dir" "$work")
echo "$context"
echo "- xsort $(git -C "$root" describe --always --dirty 2> /dev/null || echo unknown) (release build); $(sort --version | head -1)"
echo "- $runs runs each after an untimed one, medians; inputs in the page cache, outputs to new files in $dir"
echo

# --- 1 and 2: fixed-size records --------------------------------------------------------------
fixed='-format=size:100 -field=name:key,size:10'
plain_spec="$fixed -key=key"
select_spec="$fixed -field=name:first,size:1,off:0 -key=key -include=(first lt x'80')"
reformat_spec="$fixed -field=name:half,size:40,off:10 -key=key -reformat=key,half"
t0=$(now)
"$bin/gensort" -c "$records" "$in" 2> "$work/gen.txt"; sum=$(tail -1 "$work/gen.txt")
echo "- input: $records gensort records, $(stat -c %s "$in") bytes, made in $(secs "$(now) - $t0") s"
cat "$in" > /dev/null # into the page cache

declare -A spec_of=([plain]=$plain_spec [select]=$select_spec [reformat]=$reformat_spec)
# Seconds of each case's timed runs, separated by blanks (no trailing blank: `median` would read
# it as one more, empty, value).
declare -A times
add_time() { times[$1]="${times[$1]:+${times[$1]} }$2"; }
sort_fixed() { "$xsort" --no-progress -T "$work" --spec "${spec_of[$1]}" -o "$work/$1.out" "$in"; }
# One untimed run of each, with --stats kept for the log.
for c in plain select reformat; do
  "$xsort" --no-progress --stats -T "$work" --spec "${spec_of[$c]}" -o "$work/$c.out" "$in" 2> "$work/$c.stats"
done
for _ in $(seq "$runs"); do
  for c in plain select reformat; do
    rm -f "$work/$c.out"; sync
    add_time "$c" "$(timed sort_fixed "$c")"
  done
done
P=$(echo "${times[plain]}" | median) S=$(echo "${times[select]}" | median) R=$(echo "${times[reformat]}" | median)
echo "- plain:    ${times[plain]} s, median $P s"
echo "- select:   ${times[select]} s, median $S s"
echo "- reformat: ${times[reformat]} s, median $R s"

echo "checking the outputs" >&2
check "$work/plain.out" "$sum"
"$bin/valsort" -q "$work/select.out" || fail "the selected output is not sorted"
kept=$("$bin/valsort" "$work/select.out" 2>&1 | sed -n 's/^Records: //p')
share=$(python3 -c "print(f'{100 * $kept / $records:.2f}')")
python3 -c "import sys; sys.exit(0 if 45 <= $share <= 55 else 1)" || fail "selection kept $kept of $records records ($share%)"
# The plain output is sorted by key, whose first byte is the selection's field: the selected
# output must be its prefix up to the first record whose first byte is 0x80 or more.
selbytes=$(stat -c %s "$work/select.out")
cmp -s -n "$selbytes" "$work/select.out" "$work/plain.out" || fail "the selected output is not the plain output's first $kept records"
next=$(od -An -tu1 -j "$selbytes" -N1 "$work/plain.out" | tr -d ' ')
[[ -z $next || $next -ge 128 ]] || fail "record $((kept + 1)) of the plain output (first byte $next) should have been selected"
[[ $(stat -c %s "$work/reformat.out") == $((50 * records)) ]] || fail "the reformat output is $(stat -c %s "$work/reformat.out") bytes, not $((50 * records))"
python3 - "$work/plain.out" "$work/reformat.out" <<'EOF' || fail "the reformat output"
import sys
# In pieces of 2^20 records: the reformat output must be the plain output's records cut to their
# first 50 bytes (the key and the 40 bytes after it), and its keys in order.
n = 1 << 20
last = b""
with open(sys.argv[1], "rb") as p, open(sys.argv[2], "rb") as r:
    while True:
        a, b = p.read(100 * n), r.read(50 * n)
        if not a and not b:
            break
        cut = b"".join([a[i:i + 50] for i in range(0, len(a), 100)])
        if cut != b:
            sys.exit("not the plain output's records cut to 50 bytes")
        keys = [last] + [b[i:i + 10] for i in range(0, len(b), 50)]
        if any(x > y for x, y in zip(keys, keys[1:])):
            sys.exit("keys out of order")
        last = keys[-1]
EOF
echo "- checked: plain sorted with the input's checksum; selected sorted, $kept records ($share%), the plain output's records below x'80'; reformat $((50 * records)) bytes, the plain output cut to 50 bytes"
rm -f "$in" "$work"/*.out

# --- 3: separated records ---------------------------------------------------------------------
csv=$work/in.csv
t0=$(now)
lines=$(python3 - "$csv" "$size" <<'EOF'
import random, sys
# Lines "id,name,key,payload": the key a random word of 3-12 letters (3 in 4) or a number below
# 10^9, drawn from 2^20 of them; names from 1000, payloads from 4096. Stops at the line that
# reaches SIZE bytes.
path, size = sys.argv[1], int(sys.argv[2])
rng = random.Random(20261128)
letters = "abcdefghijklmnopqrstuvwxyz"
def word(lo, hi):
    return "".join(rng.choices(letters, k=rng.randint(lo, hi)))
keys = [word(3, 12) if rng.random() < 0.75 else str(rng.randrange(10**9)) for _ in range(1 << 20)]
names = [word(4, 10).capitalize() for _ in range(1000)]
payloads = [word(8, 30) for _ in range(4096)]
written = lines = 0
batch = 1 << 18
with open(path, "w") as f:
    while written < size:
        k, n, p = rng.choices(keys, k=batch), rng.choices(names, k=batch), rng.choices(payloads, k=batch)
        text = "".join([f"{lines + i},{n[i]},{k[i]},{p[i]}\n" for i in range(batch)])
        if written + len(text) > size:
            text = text[:text.index("\n", size - written - 1) + 1]
        f.write(text)
        written += len(text)
        lines += text.count("\n")
print(lines)
EOF
)
csvbytes=$(stat -c %s "$csv")
echo "- input: $csvbytes bytes, $lines lines of 4 comma-separated fields, made in $(secs "$(now) - $t0") s"
cat "$csv" > /dev/null

sort_gnu() { LC_ALL=C sort -t, -k3,3 "$csv" -o "$work/gnu.out"; }
sort_lines() { "$xsort" --no-progress -T "$work" -t, -k3,3 -o "$work/lines.out" "$csv"; }
sort_spec() { "$xsort" --no-progress -T "$work" --spec "-format=separator:comma -key=position:3" -o "$work/spec.out" "$csv"; }
"$xsort" --no-progress --stats -T "$work" -t, -k3,3 -o "$work/lines.out" "$csv" 2> "$work/lines.stats"
"$xsort" --no-progress --stats -T "$work" --spec "-format=separator:comma -key=position:3" -o "$work/spec.out" "$csv" 2> "$work/spec.stats"
# GNU's first run is its untimed one, unless it takes over 60 s: then it is its only run.
echo "timing GNU sort" >&2
sync
first=$(timed sort_gnu)
gnu_once=$(python3 -c "print('yes' if $first > 60 else 'no')")
if [[ $gnu_once == yes ]]; then add_time gnu "$first"; fi
for _ in $(seq "$runs"); do
  for c in lines spec gnu; do
    [[ $c != gnu || $gnu_once == no ]] || continue
    rm -f "$work/$c.out"; sync
    add_time "$c" "$(timed "sort_$c")"
  done
done
G=$(echo "${times[gnu]}" | median) L=$(echo "${times[lines]}" | median) Q=$(echo "${times[spec]}" | median)
echo "- GNU:         ${times[gnu]} s, median $G s$([[ $gnu_once == no ]] || echo " (one run: the first took over 60 s)")"
echo "- xsort lines: ${times[lines]} s, median $L s"
echo "- xsort spec:  ${times[spec]} s, median $Q s"

echo "checking the outputs" >&2
cmp -s "$work/gnu.out" "$work/lines.out" || fail "xsort -t, -k3,3 is not GNU's output byte for byte"
LC_ALL=C sort -c -s -t, -k3,3 "$work/spec.out" || fail "the spec output is not in the order of -t, -k3,3"
[[ $(wc -l < "$work/spec.out") == "$lines" ]] || fail "the spec output has $(wc -l < "$work/spec.out") lines, not $lines"
[[ $(stat -c %s "$work/spec.out") == "$csvbytes" ]] || fail "the spec output has $(stat -c %s "$work/spec.out") bytes, not $csvbytes"
echo "- checked: xsort's line sort is GNU's output byte for byte; the spec output in -s -t, -k3,3 order, $lines lines, $csvbytes bytes"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
rm -f "$csv" "$work"/*.out

echo
echo "## statistics of the untimed runs (--stats)"
for c in plain select reformat lines spec; do
  echo
  echo "### $c"
  cat "$work/$c.stats"
done

sel=$(ratio "$S" "$P") ref=$(ratio "$R" "$P") gnu=$(ratio "$G" "$Q") spec=$(ratio "$Q" "$L")
echo
echo "## summary"
echo
echo "$context"
echo "- load average after the timed runs: $load_after"
echo "- selection and reformat: $records gensort records ($((100 * records)) bytes); separated: $csvbytes bytes, $lines lines"
echo
echo "| figure | seconds or ratio | target | |"
echo "|---|---|---|---|"
echo "| plain: \`xsort --spec '$plain_spec'\` | $P | | |"
echo "| selected: \`... -include=(first lt x'80')\`, $kept kept ($share%) | $S | | |"
echo "| reformat: \`... -reformat=key,half\`, 50 of 100 bytes | $R | | |"
echo "| GNU: \`LC_ALL=C sort -t, -k3,3\`$([[ $gnu_once == no ]] || echo ", one run") | $G | | |"
echo "| xsort lines: \`xsort -t, -k3,3\` | $L | | |"
echo "| spec: \`xsort --spec \"-format=separator:comma -key=position:3\"\` | $Q | | |"
echo "| selected / plain | $sel | <= 0.6 | $(verdict "$sel <= 0.6") |"
echo "| reformat / plain | $ref | <= 1.0 | $(verdict "$ref <= 1.0") |"
echo "| GNU / spec | $gnu | >= 8 | $(verdict "$gnu >= 8") |"
echo "| spec / xsort lines | $spec | <= 1.2 | $(verdict "$spec <= 1.2") |"
echo
echo "- all outputs checked: yes"
