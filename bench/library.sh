#!/usr/bin/env bash
# The library's benchmark: xsort's C API and Rust push/pull API against the xsort command on the
# same data, ratios measured in one run on this machine.
#
#   bash bench/library.sh [--records N] [--dir DIR] [--runs K]
#
# For N gensort records (default 10^7 = 1 GB) in DIR (default $TMPDIR or /tmp) it measures, K times
# each (default 3), reporting the median:
#   1. in memory: `xsort` sorting the file to a file with the input in the page cache, against a C
#      program (bench/c/release_return.c, linked with libxsort) that holds the records in memory and
#      releases them with xsort_release_recs in ~1 MiB chunks (whole records), then takes them back
#      with xsort_return_recs into a ~1 MiB buffer; beside them, bench/c/fresh_copy.c copies the
#      same records in the same chunks into fresh memory and nothing else: the least any in-memory
#      library sort pays that the command, sorting the cached file from its mapping, does not.
#      Both run once untimed right before each timed run (their memory's cost on a VM depends on
#      whether its pages were used lately).
#      Target: the C API at most 1.3x the sum of that floor and the command's time;
#   2. spilled, budget 1/8 of the data: `xsort -S` against the Rust push/pull API
#      (crates/core/examples/push_pull.rs: the file read and pushed in 1 MiB chunks, the output
#      pulled in 1 MiB chunks and written), both from the page cache (target: at most 1.3x).
# Every output is checked with valsort against gensort's checksum. Generated files are deleted.
set -euo pipefail
records=10000000 dir=${TMPDIR:-/tmp} runs=3
while [[ $# -gt 0 ]]; do
  case $1 in
    --records) records=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--records N] [--dir DIR] [--runs K]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/common.sh"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort -p xsort-sortbench -p xsort-capi
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort-core --example push_pull
bin=$root/target/release
work=$(mktemp -d "$dir/xsort-library.XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/release_return" "$root/bench/c/release_return.c" -I "$root/crates/capi/include" -L "$bin" -lxsort -Wl,-rpath,"$bin"
cc -O2 -o "$work/fresh_copy" "$root/bench/c/fresh_copy.c"
bytes=$((records * 100))
chunk=$(((1 << 20) / 100 * 100))
budget=$((bytes / 8))

json() { python3 -c "import json, sys; print(json.loads(sys.stdin.read())['$1'])"; }

echo "# xsort library benchmark, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) threads available; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- memory: $(free -g | awk '/^Mem:/ {print $2 " GiB total, " $7 " GiB available"}'); kernel $(uname -r)"
echo "- xsort: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) (release build)"
echo "- data: $records records of 100 bytes ($((bytes / 1000000)) MB) in $dir, $runs runs each, medians reported"
echo

"$bin/gensort" -c "$records" "$work/in" 2> "$work/gen.txt"; sum=$(tail -1 "$work/gen.txt")
spec="-format=size:100 -field=name:key,size:10,off:0,character -key=key"
declare -a cli capi fresh spill pp
for ((i = 1; i <= runs; i++)); do
  cat "$work/in" > /dev/null; rm -f "$work/out"; sync
  cli+=("$(timed "$bin/xsort" --record-size=100 --key-bytes=0:10 --no-progress -T "$work" -o "$work/out" "$work/in")")
  check "$work/out" "$sum"; rm -f "$work/out"; sync
  # The in-memory programs each run once untimed first: fresh memory costs on these VMs depend
  # on whether the guest used its pages lately (measured: the same 816,000 page faults in a
  # release phase of 0.58 s and of 2.97 s), so the C API and its floor are both timed warm.
  "$work/release_return" "$spec -temp=$work" "$chunk" "$work/in" "$work/out" > /dev/null; rm -f "$work/out"
  capi+=("$("$work/release_return" "$spec -temp=$work" "$chunk" "$work/in" "$work/out" | json total_s)")
  check "$work/out" "$sum"; rm -f "$work/out"; sync
  "$work/fresh_copy" "$chunk" "$work/in" > /dev/null
  fresh+=("$("$work/fresh_copy" "$chunk" "$work/in" | json copy_s)")
  spill+=("$(timed "$bin/xsort" --record-size=100 --key-bytes=0:10 --no-progress -S "${budget}b" -T "$work" -o "$work/out" "$work/in")")
  check "$work/out" "$sum"; rm -f "$work/out"; sync
  pp+=("$("$bin/examples/push_pull" --record-size 100 --key-bytes 0:10 --memory "$budget" --temp "$work" --chunk $((1 << 20)) "$work/in" "$work/out" | json total_s)")
  check "$work/out" "$sum"; rm -f "$work/out"
done
C=$(echo "${cli[*]}" | median); A=$(echo "${capi[*]}" | median); F=$(echo "${fresh[*]}" | median)
S=$(echo "${spill[*]}" | median); P=$(echo "${pp[*]}" | median)
echo "| measurement | seconds | ratio | target |"
echo "|---|---|---|---|"
echo "| xsort, file to file, input in the page cache | $C | | |"
echo "| C API in memory: release ${chunk}-byte chunks, return into ${chunk}-byte buffers | $A | $(ratio "$A" "$C") x xsort; $(ratio "$A" "($C + $F)") x (xsort + fresh copy) | <= 1.3 x (xsort + fresh copy) |"
echo "| floor of any in-memory library sort: copying the records into fresh memory, same chunks | $F | $(ratio "$F" "$C") x xsort | |"
echo "| xsort -S $budget bytes (1/8 of the data), page cache | $S | | |"
echo "| Rust push/pull, same budget, 1 MiB pushes and pulls from and to files | $P | $(ratio "$P" "$S") x xsort | <= 1.3 |"
echo
echo "raw: xsort ${cli[*]} | C API ${capi[*]} | fresh copy ${fresh[*]} | xsort spilled ${spill[*]} | push/pull spilled ${pp[*]}"
