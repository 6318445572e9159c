# Helpers shared by the bench scripts (sourced, not run): timing and medians.
now() { date +%s.%N; }
median() { tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
ratio() { python3 -c "print(f'{$1 / $2:.3f}')"; }
secs() { python3 -c "print(f'{$1:.3f}')"; }
# Runs a command and prints its wall time in seconds.
timed() { local t0; t0=$(now); "$@"; python3 -c "print(f'{$(now) - $t0:.3f}')"; }
