#!/usr/bin/env bash
# CSV with a header and quoted fields, sorted on a numeric column: xsort against DuckDB and Polars,
# ratios measured in one run on this machine.
#
#   bash bench/csv.sh [--size BYTES] [--dir DIR] [--runs K] [--cases LIST] [--xsort PATH]
#
# One RFC 4180 file of BYTES bytes (default 10^9; `bench/csv_gen.py`, seeded: the header
# `id,name,city,price,comment`, about 12 million records at 1 GB, names and cities quoted with
# commas and doubled quotes inside, 1 record in 50 with a comment over several lines, the price a
# decimal number, negative in 1 record in 11), in DIR (default $TMPDIR or /tmp), K runs each
# (default 3), medians reported. Each run reads the input into the page cache first and writes a
# new output file in DIR. Cases (LIST, comma-separated, default all of them):
#   xsort        `xsort --csv --header -k4,4n -s -o OUT IN`
#   duckdb       DuckDB: COPY (SELECT * FROM read_csv(IN, header = true, columns = {...}) ORDER BY
#                price) TO OUT (HEADER)                           (target: xsort at least 8x faster)
#   polars       Polars: pl.read_csv(IN, schema=...).sort("price").write_csv(OUT)      (at least 8x)
#   polars-lazy  Polars: pl.scan_csv(IN, schema=...).sort("price").sink_csv(OUT); Polars' ratio is
#                taken on the faster of its two ways
#   lines        for context, the line sort: `xsort -t, -k4,4n -s -o OUT IN` (not CSV: a quoted
#                comma shifts the fields, a multi-line record falls apart into lines)
#   gnu          for context, the same line sort by GNU: `LC_ALL=C sort --parallel=N -S 50% ...`
# The peers run in a virtualenv of their own, target/bench-csv-venv (duckdb and polars from PyPI,
# installed on first use; `bench/csv_peers.py`), each run a new process, timed from the call to the
# library's end (its import and the interpreter's start are not counted); xsort and GNU sort are
# timed as whole processes. --xsort PATH times that binary instead of building target/release/xsort.
# Every output is checked (`bench/csv_peers.py check`, Python's csv module): the header first, the
# price column non-decreasing as numbers, and the input's rows (peers re-quote fields and rewrite
# numbers: rows are compared parsed, id and price as numbers); xsort's records must be the input's
# records byte for byte and keep the input's order among equal prices (-s); the line sorts must hold
# the input's lines in the order of -k4,4n, and xsort's must equal GNU's byte for byte.
# Generated files are deleted at the end; the script exits with 1 if a case failed or a check did.
set -euo pipefail
size=1000000000 dir=${TMPDIR:-/tmp} runs=3 cases=xsort,duckdb,polars,polars-lazy,lines,gnu xsort=
usage="usage: $0 [--size BYTES] [--dir DIR] [--runs K] [--cases xsort,duckdb,polars,polars-lazy,lines,gnu] [--xsort PATH]"
while [[ $# -gt 0 ]]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --xsort) xsort=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/common.sh"
wanted() { [[ ,$cases, == *,$1,* ]]; }
if [[ -z $xsort ]]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p xsort
  xsort=$root/target/release/xsort
fi
venv=$root/target/bench-csv-venv py=$root/target/bench-csv-venv/bin/python
if ! "$py" -c 'import duckdb, polars' 2> /dev/null; then
  [[ -x $py ]] || python3 -m venv "$venv"
  "$py" -m pip install -q --disable-pip-version-check duckdb polars
fi
work=$(mktemp -d "$dir/xsort-csv.XXXXXX")
trap 'rm -rf "$work"' EXIT
in=$work/in.csv

echo "# CSV, header and quoted fields, numeric key: xsort vs DuckDB and Polars, $(date -u +%Y-%m-%dT%H:%MZ)"
echo
machine_context "$dir" "$work"
echo "- xsort $(git -C "$root" describe --always --dirty 2> /dev/null || echo unknown) ($xsort); $(sort --version | head -1); $("$py" -c 'import sys, duckdb, polars; print(f"Python {sys.version.split()[0]}, DuckDB {duckdb.__version__}, Polars {polars.__version__}")')"
t0=$(now)
read -r records multi < <(python3 "$root/bench/csv_gen.py" "$in" "$size")
[[ -n ${multi:-} ]] || { echo "FAILED: bench/csv_gen.py" >&2; exit 1; }
gen=$(secs "$(now) - $t0")
echo "- input: $(stat -c %s "$in") bytes, a header and $records records ($multi over several lines), made by bench/csv_gen.py in $gen s"
echo "- $runs runs each, medians; the input in the page cache, outputs to new files in $dir"
echo

# Runs COMMAND once and prints its wall time, or (SELF=self) the seconds it printed itself; fails
# as it fails, its standard error kept in $work/NAME.err.
once() { # NAME SELF COMMAND...
  local name=$1 self=$2 t0 t1; shift 2
  t0=$(now)
  "$@" > "$work/said" 2>> "$work/$name.err" || return
  t1=$(now)
  if [[ $self == self ]]; then cat "$work/said"; else secs "$t1 - $t0"; fi
}
# K runs of COMMAND, each after removing OUT, flushing dirty pages and reading the input into the
# page cache; prints the median seconds, or fails at the first failed run.
time_runs() { # NAME SELF OUT COMMAND...
  local name=$1 self=$2 out=$3 t=() i s; shift 3
  for i in $(seq "$runs"); do
    rm -f "$out"; sync; cat "$in" > /dev/null
    s=$(once "$name" "$self" "$@") || return
    t+=("$s")
  done
  echo "${t[*]}" | median
}

declare -A secs_of out_of
failed=()
run_case() { # NAME SELF OUT COMMAND...
  local name=$1 s rc=0
  wanted "$name" || return 0
  echo "timing $name" >&2
  s=$(time_runs "$@") || rc=$?
  if [[ $rc == 0 ]]; then
    secs_of[$name]=$s out_of[$name]=$3
  else
    secs_of[$name]=FAILED
    failed+=("$name: exit status $rc; its standard error: $(head -c 600 "$work/$name.err")")
  fi
}
gnu_parallel=$(nproc)
run_case xsort wall "$work/xsort.csv" "$xsort" --csv --header -k4,4n -s -o "$work/xsort.csv" "$in"
run_case duckdb self "$work/duckdb.csv" "$py" "$root/bench/csv_peers.py" duckdb "$in" "$work/duckdb.csv"
run_case polars self "$work/polars.csv" "$py" "$root/bench/csv_peers.py" polars "$in" "$work/polars.csv"
run_case polars-lazy self "$work/polars-lazy.csv" "$py" "$root/bench/csv_peers.py" polars-lazy "$in" "$work/polars-lazy.csv"
run_case lines wall "$work/xsort.lines" "$xsort" -t, -k4,4n -s -o "$work/xsort.lines" "$in"
run_case gnu wall "$work/gnu.lines" env LC_ALL=C sort --parallel="$gnu_parallel" -S 50% -t, -k4,4n -s -o "$work/gnu.lines" "$in"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The checks, all in one process (it fingerprints the input once).
echo "checking the outputs" >&2
declare -A verdict
declare -A kind_of=([xsort]=csv-stable [duckdb]=csv [polars]=csv [polars-lazy]=csv [lines]=lines [gnu]=lines)
args=()
for name in "${!out_of[@]}"; do args+=("${kind_of[$name]}:${out_of[$name]}"); done
if [[ ${#args[@]} -gt 0 ]]; then
  while read -r path rest; do
    for name in "${!out_of[@]}"; do
      [[ ${out_of[$name]} != "$path" ]] || verdict[$name]=$rest
    done
  done < <("$py" "$root/bench/csv_peers.py" check "$in" "${args[@]}" || true)
fi
if [[ -n ${out_of[lines]:-} && -n ${out_of[gnu]:-} ]] && ! cmp -s "${out_of[lines]}" "${out_of[gnu]}"; then
  verdict[lines]="FAILED: not GNU's output byte for byte (${verdict[lines]:-})"
fi
for name in "${!out_of[@]}"; do
  [[ ${verdict[$name]:-missing} == ok ]] || failed+=("$name: ${verdict[$name]:-the check printed nothing}")
done

# A table row: NAME LABEL COMMAND TARGET
x=${secs_of[xsort]:-}
over_xsort() { # SECONDS: SECONDS / xsort's, or -
  if [[ $1 =~ ^[0-9.]+$ && $x =~ ^[0-9.]+$ ]]; then python3 -c "print(f'{$1 / $x:.2f}x')"; else echo -; fi
}
row() {
  local name=$1 s check
  wanted "$name" || return 0
  s=${secs_of[$name]:-FAILED}
  case ${verdict[$name]:-} in ok) check=yes ;; "") check=- ;; *) check=NO ;; esac
  [[ $name != lines || $check != yes || -z ${out_of[gnu]:-} ]] || check="yes, GNU's bytes"
  echo "| $2 | \`$3\` | $s | $(over_xsort "$s") | $4 | $check |"
}
echo "| case | command | s | / xsort --csv | target | output checked |"
echo "|---|---|---|---|---|---|"
row xsort "xsort, CSV" "xsort --csv --header -k4,4n -s -o OUT IN" ""
row duckdb DuckDB "COPY (SELECT * FROM read_csv('IN', header = true, columns = {...}) ORDER BY price) TO 'OUT' (HEADER)" ">= 8x"
row polars "Polars, eager" "pl.read_csv(IN, schema=...).sort('price').write_csv(OUT)" ">= 8x (faster way)"
row polars-lazy "Polars, lazy" "pl.scan_csv(IN, schema=...).sort('price').sink_csv(OUT)" ">= 8x (faster way)"
row lines "xsort, lines (context)" "xsort -t, -k4,4n -s -o OUT IN" ""
row gnu "GNU sort, lines (context)" "LC_ALL=C sort --parallel=$gnu_parallel -S 50% -t, -k4,4n -s -o OUT IN" ""
echo
verdict_line() { # LABEL SECONDS
  local r
  r=$(over_xsort "$2")
  [[ $r != - ]] || return 0
  if python3 -c "import sys; sys.exit(0 if $2 / $x >= 8 else 1)"; then
    echo "- $1 / xsort --csv: $r (target at least 8x: met)"
  else
    echo "- $1 / xsort --csv: $r (target at least 8x: MISSED)"
  fi
}
verdict_line DuckDB "${secs_of[duckdb]:-}"
polars_best=
for name in polars polars-lazy; do
  s=${secs_of[$name]:-}
  [[ $s =~ ^[0-9.]+$ ]] || continue
  if [[ -z $polars_best ]] || python3 -c "import sys; sys.exit(0 if $s < ${secs_of[$polars_best]} else 1)"; then polars_best=$name; fi
done
[[ -z $polars_best ]] || verdict_line "Polars ($polars_best, its faster way)" "${secs_of[$polars_best]}"
l=${secs_of[lines]:-} g=${secs_of[gnu]:-}
if [[ $l =~ ^[0-9.]+$ && $x =~ ^[0-9.]+$ ]]; then echo "- xsort --csv / xsort's line sort: $(ratio "$x" "$l")x (the cost of reading CSV records)"; fi
if [[ $l =~ ^[0-9.]+$ && $g =~ ^[0-9.]+$ ]]; then echo "- GNU sort / xsort, line sort: $(ratio "$g" "$l")x"; fi
echo "- load average after the timed runs: $load_after"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo
  for f in "${failed[@]}"; do echo "FAILED: $f"; done
  exit 1
fi
echo "- all outputs checked: yes"
