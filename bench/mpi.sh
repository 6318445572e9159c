#!/usr/bin/env bash
# Cluster mode on this machine (docs/CLUSTER.md; its runs are in docs/BENCHMARKS.md):
#   1. N records (default 10^7, 1 GB) from the page cache: single-node xsort against
#      `mpirun -np 2 xsort-mpi` (the ratio; the issue's target is at most 1.3), and the exchange's
#      throughput from --stats-json (target at least 2 GB/s).
#   2. Datamation: 10^6 records, `mpirun -np 4 xsort-mpi`, launch included, RUNS runs (default 20):
#      median and spread, beside single-node xsort's.
# Every output is checked with valsort. The machine's context (CPU, cores, load) is printed.
#
# Usage: bash bench/mpi.sh [--records N] [--datamation-records N] [DIR]
#   DIR holds the data (default /tmp); its files are deleted afterwards.
#   RUNS=N sets the Datamation runs (default 20); RUNS1=N the runs of part 1 (default 3).
#   Before each timed job the previous outputs are removed and the disk given SETTLE seconds
#   (default 2 in part 1; 1 for Datamation).
#   NICE=N runs everything under `nice -n N` (default 0). MPIRUN_ARGS adds options to mpirun
#   (e.g. a hostfile; on one host xsort-mpi already chooses Open MPI's ob1 over shared memory).
set -euo pipefail

records=10000000
dm_records=1000000
dir=/tmp
while [ $# -gt 0 ]; do
    case "$1" in
        --records) records="$2"; shift 2 ;;
        --records=*) records="${1#*=}"; shift ;;
        --datamation-records) dm_records="$2"; shift 2 ;;
        --datamation-records=*) dm_records="${1#*=}"; shift ;;
        -h|--help) sed -n "2,16p" "$0"; exit 0 ;;
        -*) echo "mpi.sh: unknown option $1" >&2; exit 2 ;;
        *) dir="$1"; shift ;;
    esac
done
runs="${RUNS:-20}"
runs1="${RUNS1:-3}"
nice_n="${NICE:-0}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source=bench/common.sh
. "$here/common.sh"

command -v mpirun >/dev/null || { echo "mpi.sh: mpirun not found (install openmpi-bin)" >&2; exit 2; }
nice -n "$nice_n" cargo build --release --quiet -p xsort -p xsort-mpi -p xsort-sortbench --manifest-path "$root/Cargo.toml"
target="$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
bin="$target/release"

work="$(mktemp -d "$dir/xsort-mpi-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT INT TERM
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
keys=(--record-size 100 --key-bytes 0:10)
single() { nice -n "$nice_n" "$bin/xsort" "${keys[@]}" "$@"; }
read -r -a mpirun_args <<<"${MPIRUN_ARGS:-}"
cluster() { local np="$1"; shift; nice -n "$nice_n" mpirun --oversubscribe "${mpirun_args[@]}" -np "$np" "$bin/xsort-mpi" "${keys[@]}" "$@"; }
check() { "$bin/valsort" -q "$1" >/dev/null 2>&1 || { echo "mpi.sh: valsort rejects $1" >&2; exit 1; }; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
# Removes the files named and lets the disk settle before a timed job: on a filesystem mounted with
# `discard` (as the development VMs' is), freeing a just-written 1 GB file keeps the disk busy for a
# while, and `xsort` timed right after removing the previous outputs ran 0.05-0.15 s slower.
settle() { rm -f "$@"; sync; sleep "${SETTLE:-2}"; }
# Median, minimum and maximum of the numbers on stdin.
spread() { sort -g | awk '{a[NR]=$1} END {printf "median %.3f s (min %.3f, max %.3f, %d runs)", a[int((NR+1)/2)], a[1], a[NR], NR}'; }

echo "machine: $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(free -g | awk '/^Mem:/ {print $2}') GB"
echo "$(mpirun --version | head -1) ${MPIRUN_ARGS:-}; load average before: $(load)"
echo

echo "1) $records records ($(secs "$records * 100 / 1e9") GB) from the page cache, np 2"
"$bin/gensort" "$records" "$work/in"
cat "$work/in" >/dev/null
s_times=() c_times=() c_rates=()
for _ in $(seq "$runs1"); do
    settle "$work/out1" "$work/out2"
    s_times+=("$(timed single -o "$work/out1" "$work/in")")
    check "$work/out1"
    settle
    c_times+=("$(timed cluster 2 --stats-json "$work/stats.json" -o "$work/out2" "$work/in")")
    check "$work/out2"
    cmp -s "$work/out1" "$work/out2" || { echo "mpi.sh: np 2 output differs from xsort's" >&2; exit 1; }
    c_rates+=("$(python3 -c "import json; o = json.load(open('$work/stats.json'))['overall']; print(f\"{o['exchange_mb_per_s'] / 1000:.2f}\")")")
    echo "  xsort ${s_times[-1]} s, mpirun -np 2 ${c_times[-1]} s, exchange ${c_rates[-1]} GB/s (load $(load))"
done
s_med="$(echo "${s_times[*]}" | median)" c_med="$(echo "${c_times[*]}" | median)"
echo "  median: xsort $s_med s, np 2 $c_med s, ratio $(ratio "$c_med" "$s_med") (target <= 1.3), exchange $(echo "${c_rates[*]}" | median) GB/s (target >= 2)"
python3 - "$work/stats.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
for x in r["per_rank"]:
    e = x["exchange"]
    if x.get("sort"):  # the engine's path: exchange, then the sort's end, then the write
        rest = (f"sort to its end {x['sort']['elapsed_s']:.3f} s, write {x['output_s']:.3f} s "
                f"(of it waiting for the sort {x['output_pull_s']:.3f} s)")
        print(f"  rank {x['rank']} (last run): exchange {e['elapsed_s']:.3f} s (read and cut {e['input_s']:.3f} s, "
              f"blocked in MPI {e['wait_s']:.3f} s), {rest}, total {x['elapsed_s']:.3f} s")
    else:  # sorted in place: counting, then rounds that exchange, sort and write together
        print(f"  rank {x['rank']} (last run): counting {e['count_s']:.3f} s, then {e['rounds']} rounds {x['output_s']:.3f} s "
              f"(packing {e['input_s'] - e['count_s']:.3f} s, blocked in MPI {e['wait_s']:.3f} s, sorting {x['local_sort_s']:.3f} s, "
              f"gathering {x['output_pull_s']:.3f} s), total {x['elapsed_s']:.3f} s")
EOF
rm -f "$work/in" "$work/out1" "$work/out2"
echo

echo "2) Datamation: $dm_records records, launch included, $runs runs each"
"$bin/gensort" "$dm_records" "$work/dm"
cat "$work/dm" >/dev/null
s_times=() c_times=()
for _ in $(seq "$runs"); do
    SETTLE=1 settle "$work/dm1" "$work/dm4"
    s_times+=("$(timed single -o "$work/dm1" "$work/dm")")
    SETTLE=1 settle
    c_times+=("$(timed cluster 4 -o "$work/dm4" "$work/dm")")
    check "$work/dm1"
    check "$work/dm4"
    cmp -s "$work/dm1" "$work/dm4" || { echo "mpi.sh: np 4 output differs from xsort's" >&2; exit 1; }
done
echo "  xsort:                 $(printf '%s\n' "${s_times[@]}" | spread)"
echo "  mpirun -np 4 xsort-mpi: $(printf '%s\n' "${c_times[@]}" | spread)"
"$bin/gensort" 1 "$work/one"
echo "  launch alone: mpirun -np 4 true $(timed nice -n "$nice_n" mpirun --oversubscribe "${mpirun_args[@]}" -np 4 true) s," \
    "xsort-mpi -np 4 on 1 record (MPI start and end too) $(timed cluster 4 -o "$work/one.out" "$work/one") s," \
    "-np 2 $(timed cluster 2 -o "$work/one.out" "$work/one") s"
echo "load average after: $(load)"
