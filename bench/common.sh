# Helpers shared by the bench scripts (sourced, not run): timing, medians, output checks and the
# machine context.
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
# Prints the machine's context as two list lines: the CPU and its threads, the memory, the
# filesystem of DIR (the benchmark's work directory WORK is on it) and the load average now.
machine_context() { # machine_context DIR WORK
  echo "- CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) threads; memory $(free -g | awk '/^Mem:/ {print $2 " GiB total, " $7 " GiB available"}')"
  echo "- filesystem of $1: $(df --output=fstype "$2" | tail -1); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
}
