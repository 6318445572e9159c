#!/usr/bin/env bash
# Data far beyond memory inside a container's limit: xsort with its default budget in a memory
# cgroup of LIMIT (default 2 GiB), on N gensort records (default 10^8 = 10 GB), input evicted from
# the page cache, output synced, against the two-pass floor measured beside it in the same run
# (`xsort-bench floor --duplex`: twice the time to read the input while writing as many bytes).
# The sort must finish (not be OOM-killed), take its budget from the cgroup (the statistics'
# memory_budget_basis says so) and be valsort-clean with gensort's checksum.
#
#   bash bench/cgroup.sh [--records N] [--limit BYTES] [--dir DIR]
#
# Needs root and a writable memory cgroup (v1 `memory.limit_in_bytes` or v2 `memory.max`), made as
# a child of this shell's own and removed at the end with the generated files.
set -euo pipefail
records=100000000 limit=$((2 << 30)) dir=${TMPDIR:-/tmp}
while [[ $# -gt 0 ]]; do
  case $1 in
    --records) records=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "usage: $0 [--records N] [--limit BYTES] [--dir DIR]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/common.sh"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort -p xsort-sortbench -p xsort-bench
bin=$root/target/release

# The cgroup: v1's memory hierarchy where this shell has one, else v2's.
own=$(sed -n 's/^[0-9]*:[^:]*\bmemory\b[^:]*://p' /proc/self/cgroup)
if [[ -n $own && -d /sys/fs/cgroup/memory ]]; then
  cg=/sys/fs/cgroup/memory$own/xsort-bench-$$ limit_file=memory.limit_in_bytes
else
  cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/xsort-bench-$$ limit_file=memory.max
fi
work=$(mktemp -d "$dir/xsort-cgroup.XXXXXX")
trap 'rm -rf "$work"; rmdir "$cg" 2>/dev/null || true' EXIT
mkdir "$cg"
echo "$limit" > "$cg/$limit_file"

echo "# xsort in a memory cgroup, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "- CPU: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), $(nproc) threads; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- memory: $(free -g | awk '/Mem:/ {print $2}') GiB total; cgroup $cg limited to $((limit >> 20)) MiB"
echo "- data: $records records of 100 bytes in $dir"
"$bin/gensort" -c "$records" "$work/in" 2> "$work/gen.txt"; sum=$(tail -1 "$work/gen.txt")
duplex=$("$bin/xsort-bench" floor --json --duplex --scratch "$work" "$work/in" |
  python3 -c "import json, sys; print('%.3f' % json.load(sys.stdin)['duplex_s'])")
floor=$(python3 -c "print(f'{2 * $duplex:.3f}')")
"$bin/xsort-bench" evict "$work/in"
sync
sleep 2
t=$(timed sh -c "echo \$\$ > '$cg/cgroup.procs' && exec '$bin/xsort' --record-size=100 --key-bytes=0:10 --sync --stats-json '$work/s.json' -o '$work/out' '$work/in'")
check "$work/out" "$sum"
python3 - "$work/s.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"- budget {s['memory_budget_bytes'] >> 20} MiB ({s['memory_budget_basis']}), {s['runs']} runs, "
      f"{s['passes']} passes, peak RSS {s['peak_rss_bytes'] >> 20} MiB")
EOF
echo "- two-pass floor: $floor s (2 x $duplex s)"
echo "- xsort, default budget, cold, --sync: $t s = $(ratio "$t" "$floor") x the two-pass floor (target <= 1.15)"
