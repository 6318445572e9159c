#!/usr/bin/env bash
# Compressed files in and out: ratios measured in one run on this machine.
#
#   bash bench/compressed.sh [--lines N] [--dir DIR] [--runs K]
#
# N `gensort -a` lines (default 10^7, 1 GB), in DIR (default $TMPDIR or /tmp), K runs each
# (default 3), medians reported. The inputs are made by the formats' own tools (`gzip -6`,
# `zstd -3`) and read from the page cache. Cases (issue 30's targets):
#   1. gzip in, gzip out: `xsort -o out.gz in.gz` against `zcat in.gz | LC_ALL=C sort -S 50%
#      --parallel=N | gzip > out.gz` (target: xsort at least 3x faster);
#   2. zstd in, zstd out: `xsort -o out.zst in.zst` against xsort's own plain file-to-file sort of
#      the uncompressed file (target: at most 1.3x its time).
# Each output is decompressed by the format's tool and compared with GNU's (case 1) or xsort's
# plain output (case 2), byte for byte. Beside them, the codecs' own work: the tools' decompression
# of the input and compression of the sorted output, one thread each (`gzip -dc`, `gzip -6`;
# `zstd -dc`, `zstd -3`), and the bound they set on a one-pass sort of a compressed stream: its
# plain sort, plus the decompression (one stream, one thread, all read before the sort can end),
# plus the compression spread over every thread.
# Generated files are deleted at the end.
set -euo pipefail
lines=10000000 dir=${TMPDIR:-/tmp} runs=3
while [[ $# -gt 0 ]]; do
  case $1 in
    --lines) lines=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "usage: $0 [--lines N] [--dir DIR] [--runs K]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/common.sh"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort -p xsort-sortbench
bin=$root/target/release
work=$(mktemp -d "$dir/xsort-compressed.XXXXXX")
trap 'rm -rf "$work"' EXIT
for tool in gzip zstd; do command -v $tool > /dev/null || { echo "$tool is needed (scripts/prerequisites.sh)" >&2; exit 2; }; done

echo "# Compressed files in and out, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
machine_context "$dir" "$work"
echo "- $(sort --version | head -1); $(gzip --version | head -1); $(zstd --version); xsort $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown) (release)"
echo "- $lines \`gensort -a\` lines, $runs runs each, medians; inputs in the page cache, outputs to files in $dir"
echo

"$bin/gensort" -a "$lines" "$work/plain"
gzip -6 -c "$work/plain" > "$work/in.gz"
zstd -q -3 -c "$work/plain" > "$work/in.zst"
echo "- input: $(stat -c %s "$work/plain") bytes plain, $(stat -c %s "$work/in.gz") gzip -6, $(stat -c %s "$work/in.zst") zstd -3"
echo

# Times COMMAND (a shell string) K times, each after removing OUT and reading the inputs into the
# page cache; prints the median.
time_runs() { # OUT COMMAND
  local t=() i
  for i in $(seq "$runs"); do
    rm -f "$1"; sync; cat "$work/plain" "$work/in.gz" "$work/in.zst" > /dev/null
    t+=("$(timed bash -c "$2")")
  done
  echo "${t[*]}" | median
}

gnu_gz=$(time_runs "$work/gnu.gz" "gzip -dc '$work/in.gz' | LC_ALL=C sort -S 50% --parallel=$(nproc) | gzip -6 > '$work/gnu.gz'")
xs_gz=$(time_runs "$work/xs.gz" "'$bin/xsort' -o '$work/xs.gz' '$work/in.gz'")
cmp <(gzip -dc "$work/gnu.gz") <(gzip -dc "$work/xs.gz") || { echo "FAILED: the gzip outputs differ" >&2; exit 1; }
xs_plain=$(time_runs "$work/xs.plain" "'$bin/xsort' -o '$work/xs.plain' '$work/plain'")
xs_zst=$(time_runs "$work/xs.zst" "'$bin/xsort' -o '$work/xs.zst' '$work/in.zst'")
cmp "$work/xs.plain" <(zstd -dc "$work/xs.zst") || { echo "FAILED: the zstd output differs from the plain one" >&2; exit 1; }
# The tools' own times on the same bytes, one thread each, and the bound they set.
gz_dec=$(time_runs "$work/floor" "gzip -dc '$work/in.gz' > '$work/floor'")
gz_enc=$(time_runs "$work/floor" "gzip -6 -c '$work/xs.plain' > '$work/floor'")
zst_dec=$(time_runs "$work/floor" "zstd -q -dc '$work/in.zst' > '$work/floor'")
zst_enc=$(time_runs "$work/floor" "zstd -q -3 -c '$work/xs.plain' > '$work/floor'")
bound() { python3 -c "print(f'{$xs_plain + $1 + $2 / $(nproc):.3f}')"; }

echo "| case | peer | peer s | xsort s | ratio | target | decode s, 1 thread | encode s, 1 thread | bound s | same bytes |"
echo "|---|---|---|---|---|---|---|---|---|---|"
echo "| gzip in, gzip out | zcat \| sort \| gzip | $gnu_gz | $xs_gz | $(ratio "$gnu_gz" "$xs_gz")x faster | at least 3x | $gz_dec | $gz_enc | $(bound "$gz_dec" "$gz_enc") | yes |"
echo "| zstd in, zstd out | xsort, plain file | $xs_plain | $xs_zst | $(ratio "$xs_zst" "$xs_plain")x its time | at most 1.3x | $zst_dec | $zst_enc | $(bound "$zst_dec" "$zst_enc") | yes |"
