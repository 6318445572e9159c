# Helpers shared by the bench scripts (sourced, not run): timing, medians and output checks.
now() { date +%s.%N; }
median() { tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { python3 -c "print(f'{$1 / $2:.3f}')"; }
secs() { python3 -c "print(f'{$1:.3f}')"; }
# Runs a command and prints its wall time in seconds.
timed() { local t0; t0=$(now); "$@"; python3 -c "print(f'{$(now) - $t0:.3f}')"; }
# Checks a gensort-data output with valsort (in $bin): sorted, and its checksum the input's.
check() { # check OUTPUT EXPECTED_CHECKSUM
  "$bin/valsort" -q "$1" || { echo "FAILED: $1 is not sorted" >&2; exit 1; }
  local sum; sum=$("$bin/valsort" "$1" 2>&1 | sed -n 's/^Checksum: //p')
  [[ $sum == "$2" ]] || { echo "FAILED: checksum $sum != $2" >&2; exit 1; }
}
