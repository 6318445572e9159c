#!/usr/bin/env bash
# xsort's benchmark for fixed-size records: ratios measured in one run on this machine.
#
#   bash bench/bench.sh [--records N] [--dir DIR] [--runs K] [--baseline XSORT] [--no-gnu]
#
# For N gensort records (default 10^7 = 1 GB) in DIR (default $TMPDIR or /tmp) it measures, K times
# each (default 3), reporting the median:
#   1. the I/O floors, as `xsort-bench floor --duplex` measures them (8 MiB transfers, 4 in flight,
#      as xsort transfers): the one-pass floor, an O_DIRECT read of the input + an O_DIRECT write and
#      fsync of as many bytes; and the two-pass floor, twice the time to read the input while
#      writing as many bytes (each pass of a spilled sort does both at once). Beside them, the time
#      two threads take to fault in the fresh memory a one-pass sort needs (132 bytes a record:
#      `bench/c/touch.c`), and the best floor: the lesser of the two-pass floor and the one-pass
#      floor plus that fault-in time;
#   2. xsort with its default budget, input evicted from the page cache, output synced: wall time /
#      best floor;
#   3. xsort under -S 1/100, 1/16, 1/8, 1/4 and 1/2 of the data, cold, synced: wall time /
#      two-pass floor (a sort under a budget smaller than the data reads and writes it twice);
#   4. GNU sort vs xsort on `gensort -a` data, both with the input in the page cache:
#      `LC_ALL=C sort -s -k1.1,1.10 --parallel=2 -S 50%` vs `xsort --record-size=100 --key-bytes=0:10`,
#      and whether the outputs are byte-identical (--no-gnu leaves this out: at 10^8 records GNU
#      takes minutes, and `bench/lines.sh --cases key,records` times the same pair);
#   5. xsort with the input in the page cache and -S a quarter of the data: the input is sorted
#      from its mapping in one pass, its entries sorted in batches and merged (about 17 bytes a
#      record fit a quarter of 100-byte records; 32, for one parallel sort of them all, do not);
#   6. peak RSS of the spilled sort against its budget (+10% + 32 MiB).
# With --baseline XSORT (another build, e.g. main's), every xsort measurement is also taken with it,
# right before or after this build's (alternating), and both are reported: old and new in one run.
# Every xsort output is checked with valsort and its checksum compared with gensort's.
# Generated files are deleted at the end.
set -euo pipefail
records=10000000 dir=${TMPDIR:-/tmp} runs=3 baseline= with_gnu=yes
while [[ $# -gt 0 ]]; do
  case $1 in
    --records) records=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --baseline) baseline=$(realpath "$2"); shift 2 ;;
    --no-gnu) with_gnu=; shift ;;
    *) echo "usage: $0 [--records N] [--dir DIR] [--runs K] [--baseline XSORT] [--no-gnu]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/common.sh"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort -p xsort-sortbench -p xsort-bench
bin=$root/target/release
evict() { "$bin/xsort-bench" evict "$@"; }
# The floors of FILE: "ONE_PASS READ WRITE DUPLEX" in seconds (xsort-bench's, as its reports use).
floors() {
  "$bin/xsort-bench" floor --json --duplex --scratch "$work" "$1" |
    python3 -c "import json, sys; f = json.load(sys.stdin); print(' '.join('%.3f' % f[k] for k in ('total_s', 'read_s', 'write_s', 'duplex_s')))"
}
work=$(mktemp -d "$dir/xsort-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
gcc -O2 -pthread -o "$work/touch" "$root/bench/c/touch.c"
bytes=$((records * 100))

# Times one xsort measurement: `measure NAME PREP CHECKSUM OUTPUT ARGS...` runs PREP (a command),
# then `xsort ARGS -o OUTPUT`, checks the output and appends the seconds to the array NAME; with
# --baseline, the same with the baseline binary (its times in base_NAME, its output written beside
# OUTPUT and removed, its --stats-json FILE.json as FILE.json.base), the two in alternating order
# from one run to the next. This build's output is left at OUTPUT.
measure() {
  local name=$1 prep=$2 sum=$3 out=$4 p o t; shift 4
  local progs=("$bin/xsort")
  if [[ -n $baseline ]]; then
    if ((i % 2)); then progs=("$bin/xsort" "$baseline"); else progs=("$baseline" "$bin/xsort"); fi
  fi
  for p in "${progs[@]}"; do
    local args=("$@")
    o=$out
    if [[ $p != "$bin/xsort" ]]; then
      # The baseline's output and --stats-json files go beside this build's, which the report reads.
      o=$out.base; args=("${args[@]/%.json/.json.base}")
    fi
    rm -f "$o"; $prep
    t=$(timed "$p" "${args[@]}" -o "$o")
    check "$o" "$sum"
    if [[ $p == "$bin/xsort" ]]; then eval "$name+=($t)"; else eval "base_$name+=($t)"; rm -f "$o"; fi
  done
}
cold() { sync; evict "$work/in"; }
warm() { cat "$work/in" > /dev/null; sync; }
warm_a() { cat "$work/ina" > /dev/null; sync; }
echo "# xsort benchmark, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "## Machine"
echo "- CPU: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) threads available"
echo "- governor: $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null || echo 'not exposed')"
echo "- memory: $(free -g | awk '/^Mem:/ {print $2 " GiB total, " $7 " GiB available"}')"
echo "- kernel: $(uname -r)"
src=$(df --output=source "$work" | tail -1)
echo "- filesystem of $dir: $(df --output=fstype "$work" | tail -1) on $src ($(findmnt -no OPTIONS --target "$work" 2>/dev/null | cut -c1-60)), $(df -h --output=avail "$work" | tail -1 | tr -d ' ') free"
dev=$(basename "$src"); dev=${dev%%[0-9]*}
sysfs() { local v; v=$(cat "$1" 2>/dev/null | xargs) || true; echo "${v:-unknown}"; }
echo "- block device: $dev, model '$(sysfs /sys/block/$dev/device/model)', vendor '$(sysfs /sys/block/$dev/device/vendor)', scheduler $(sysfs /sys/block/$dev/queue/scheduler), rotational $(sysfs /sys/block/$dev/queue/rotational)"
echo "- xsort: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) (release build)"
echo "- data: $records records of 100 bytes ($((bytes / 1000000)) MB), $runs runs each, medians reported"
echo

"$bin/gensort" -c "$records" "$work/in" 2> "$work/gen.txt"; sum=$(tail -1 "$work/gen.txt")
[[ -z $with_gnu ]] || { "$bin/gensort" -a -c "$records" "$work/ina" 2> "$work/gena.txt"; suma=$(tail -1 "$work/gena.txt"); }
quarter=$((bytes / 4 / 1024))K   # a bare -S number would mean KiB, as in GNU sort
# The -S sweep: the array of each fraction of the data (1/8 is `spill`, whose statistics are kept).
sweep=(100:s100 16:s16 8:spill 4:s4 2:s2)

declare -a floor1 reads writes floor2 touch one spill s100 s16 s4 s2 gnu xs cached
declare -a base_one base_spill base_s100 base_s16 base_s4 base_s2 base_xs base_cached
for ((i = 1; i <= runs; i++)); do
  sync; evict "$work/in"
  read -r f r w d < <(floors "$work/in")
  floor1+=("$f"); reads+=("$r"); writes+=("$w"); floor2+=("$(secs "2 * $d")")

  measure one cold "$sum" "$work/out" --record-size=100 --key-bytes=0:10 --sync --no-progress -T "$work" "$work/in"
  for f in "${sweep[@]}"; do
    json=(); [[ ${f#*:} != spill ]] || json=(--stats-json "$work/spill.json")
    measure "${f#*:}" cold "$sum" "$work/out" --record-size=100 --key-bytes=0:10 --sync --no-progress \
      -S "$((bytes / ${f%%:*} / 1024))K" -T "$work" "${json[@]}" "$work/in"
  done
  measure cached warm "$sum" "$work/out" --record-size=100 --key-bytes=0:10 --sync --no-progress -S "$quarter" -T "$work" --stats-json "$work/cached.json" "$work/in"
  rm -f "$work/out"
  # After the sorts: memory just faulted in and freed slowed the next sort by 10-20% here.
  touch+=("$("$work/touch" $((records * 132)))")

  # Warm: both sorts read from the page cache. `sync` first, so that neither pays for flushing the
  # other's output (GNU sort writes through the page cache and returns before its data is on disk).
  # Each program writes a new file: replacing last run's output would time freeing its blocks too.
  [[ -n $with_gnu ]] || continue
  cat "$work/ina" > /dev/null; rm -f "$work/gnu" "$work/xa"; sync
  gnu+=("$(LC_ALL=C timed sort -s -k1.1,1.10 --parallel=2 -S 50% -T "$work" -o "$work/gnu" "$work/ina")")
  measure xs warm_a "$suma" "$work/xa" --record-size=100 --key-bytes=0:10 --no-progress -T "$work" "$work/ina"
done
F1=$(echo "${floor1[*]}" | median); O=$(echo "${one[*]}" | median)
F2=$(echo "${floor2[*]}" | median)
R=$(echo "${reads[*]}" | median); W=$(echo "${writes[*]}" | median); T=$(echo "${touch[*]}" | median)
FT=$(secs "$F1 + $T"); RW2=$(secs "2 * max($R, $W)"); BEST=$(secs "min($FT, $F2)")
G=$(echo "${gnu[*]}" | median); X=$(echo "${xs[*]}" | median); C=$(echo "${cached[*]}" | median)

same="identical" same_t="not needed"
if [[ -n $with_gnu ]] && ! cmp -s "$work/gnu" "$work/xa"; then
  same="DIFFERENT"
  # GNU's -k1.1,1.10 ends the key at the end of field 1, i.e. at the first blank inside the key, so
  # keys with embedded spaces tie in GNU sort where xsort compares all 10 bytes. With a field
  # separator absent from the data (-t $'\1'), field 1 is the whole line and the keys are the same.
  rm -f "$work/gnu"
  LC_ALL=C sort -s -t $'\1' -k1.1,1.10 --parallel=2 -S 50% -T "$work" -o "$work/gnu-t" "$work/ina"
  same_t="identical"; cmp -s "$work/gnu-t" "$work/xa" || same_t="DIFFERENT"
fi
rm -f "$work/gnu" "$work/gnu-t" "$work/xa"

echo "## Results (median of $runs)"
echo
echo "| measurement | seconds | ratio | target |"
echo "|---|---|---|---|"
echo "| one-pass floor: direct read ($R s) + direct write and fsync ($W s) of $((bytes / 1000000)) MB | $F1 | | |"
echo "| two-pass floor: 2 x (direct read while writing as many bytes, and fsync) | $F2 | | |"
echo "| (2 x max(read, write): a disk that reads and writes at full speed at once) | $RW2 | measured two-pass floor / this = $(ratio "$F2" "$RW2") | |"
echo "| fault-in of $((records * 132 / 1000000)) MB of fresh memory (132 B a record), 2 threads | $T | | |"
echo "| best floor: min(one-pass floor + fault-in = $FT, two-pass floor) | $BEST | | |"
echo "| xsort, default budget, cold input, --sync | $O | $(ratio "$O" "$BEST") x best floor | <= 1.15 |"
for f in "${sweep[@]}"; do
  n=${f#*:}; t=$(eval "echo \${$n[*]}" | median)
  case ${f%%:*} in 8) target="<= 1.1" ;; 100) target="<= 1.15" ;; *) target= ;; esac
  echo "| xsort, -S 1/${f%%:*} of the data ($((bytes / ${f%%:*} / 1000000)) MB), cold, --sync | $t | $(ratio "$t" "$F2") x two-pass floor; default / this $(ratio "$O" "$t") | $target |"
done
[[ -z $with_gnu ]] || echo "| GNU sort, gensort -a, warm, LC_ALL=C sort -s -k1.1,1.10 --parallel=2 -S 50% | $G | | |"
[[ -z $with_gnu ]] || echo "| xsort, same data as 100-byte records, key 0:10, warm | $X | GNU / xsort = $(ratio "$G" "$X") | >= 8 |"
echo "| xsort, input in the page cache, -S $quarter (1/4 of data), --sync | $C | $(ratio "$C" "$F1") x one-pass floor | |"
if [[ -n $baseline ]]; then
  echo
  echo "Against the baseline $baseline, the same measurements, interleaved (median of $runs):"
  echo
  echo "| measurement | baseline s | this build s | this / baseline |"
  echo "|---|---|---|---|"
  for m in one:"default budget, cold, --sync" s100:"-S 1/100, cold, --sync" s16:"-S 1/16, cold, --sync" spill:"-S 1/8, cold, --sync" s4:"-S 1/4, cold, --sync" s2:"-S 1/2, cold, --sync" xs:"warm records (gensort -a bytes)" cached:"input cached, -S $quarter, --sync"; do
    n=${m%%:*}; b=$(eval "echo \${base_$n[*]}" | median); t=$(eval "echo \${$n[*]}" | median)
    [[ -n $b && -n $t ]] || continue   # (the warm pair is not run with --no-gnu)
    echo "| $m | $b | $t | $(ratio "$t" "$b") |" | sed 's/^| [a-z0-9]*:/| /'
  done
fi
echo
[[ -z $with_gnu ]] || echo "- outputs of xsort and GNU sort: $same (with GNU's -t \$'\\1': $same_t)"
python3 - "$work/spill.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
budget, rss = s["memory_budget_bytes"], s["peak_rss_bytes"]
limit = budget * 1.1 + (32 << 20)
print(f"- spilled sort: peak RSS {rss / 2**20:.1f} MiB, budget {budget / 2**20:.1f} MiB, limit {limit / 2**20:.1f} MiB: "
      + ("OK" if rss <= limit else "OVER"))
PY
python3 - "$work/spill.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"- spilled sort shape: {s['runs']} runs, {s['merge_levels']} merge level(s), fan-in {s['merge_fan_in']}, passes {s['passes']}")
for p in s["phases"]:
    print(f"  - {p['name']}: {p['elapsed_s']:.2f} s, {p['mb_per_s']:.0f} MB/s, {p['transfers']} transfers of {p['transfer_size'] / 2**20:.2f} MiB, {p['io_mode']}")
PY
echo
python3 - "$work/cached.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
how = "mapped from the page cache" if s.get("input_mapped") else "read"
print(f"- cached input under -S 1/4: {how}, {s['runs']} runs, passes {s['passes']}, entries {s.get('entries_bytes', 0) / 2**20:.0f} MiB, peak RSS {s['peak_rss_bytes'] / 2**20:.0f} MiB")
PY
echo
echo "raw: floor ${floor1[*]} | two-pass floor ${floor2[*]} | fault-in ${touch[*]} | default ${one[*]} | -S 1/100 ${s100[*]} | 1/16 ${s16[*]} | 1/8 ${spill[*]} | 1/4 ${s4[*]} | 1/2 ${s2[*]} | gnu ${gnu[*]} | xsort-warm ${xs[*]} | cached -S 1/4 ${cached[*]}"
[[ -z $baseline ]] || echo "raw baseline: default ${base_one[*]} | -S 1/100 ${base_s100[*]} | 1/16 ${base_s16[*]} | 1/8 ${base_spill[*]} | 1/4 ${base_s4[*]} | 1/2 ${base_s2[*]} | xsort-warm ${base_xs[*]} | cached -S 1/4 ${base_cached[*]}"
