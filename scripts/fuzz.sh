#!/usr/bin/env bash
# Fuzzes xsort's parsers and orderings with cargo-fuzz (libFuzzer; needs a nightly toolchain and
# `cargo install cargo-fuzz`): builds the targets of fuzz/ once (with debug assertions, so integer
# overflow is caught too), then runs each for SECONDS, one at a time. Each target's working corpus is
# fuzz/corpus/TARGET (git-ignored; kept between runs, so later runs start where earlier ones
# stopped), read together with the checked-in fuzz/seeds/TARGET and fuzz/regressions/TARGET; the
# words in fuzz/dicts/ serve as libFuzzer dictionaries. A failing input lands in
# fuzz/artifacts/TARGET/; minimize it with `cargo +nightly fuzz tmin -a TARGET FILE`, fix the bug,
# and save the minimized input in fuzz/regressions/TARGET/ (the test crates/core/tests/fuzz_seeds.rs
# replays it on stable from then on).
#
# With --cpu, the targets run all at once instead, each until it has used SECONDS of CPU time (not
# wall time: on a busy machine a nice'd fuzzer gets what the other work leaves), and the run ends
# with a table of each target's CPU seconds and corpus size (also kept in fuzz/cpu-report.txt).
#
#   scripts/fuzz.sh [--cpu] [SECONDS_PER_TARGET] [TARGET...]   (default: 60 seconds, every target)
#   e.g. nice -n 10 scripts/fuzz.sh 300 spec order_numeric
#        nice -n 19 scripts/fuzz.sh --cpu 1200          (20 CPU-minutes for each target)
set -euo pipefail
by_cpu=false
[[ ${1:-} == --cpu ]] && { by_cpu=true; shift; }
seconds=${1:-60}
shift $(( $# > 0 ? 1 : 0 ))
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: SECONDS must be a positive whole number, not '$seconds'" >&2; exit 2; }
cd "$(dirname "$0")/../fuzz"
if (( $# > 0 )); then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
cargo +nightly fuzz build -a
bin=target/$(rustc -vV | sed -n 's/^host: //p')/release

# The corpus directories and libFuzzer flags of target $1, in the arrays corpus and flags.
target_args() {
    local t=$1 dir dict
    corpus=(corpus/"$t")
    mkdir -p corpus/"$t" artifacts/"$t"
    for dir in seeds/"$t" regressions/"$t"; do
        [[ -d $dir ]] && corpus+=("$dir")
    done
    # A dictionary of the target's words, where there is one (order.dict serves every order_* target).
    dict=dicts/"$t".dict
    [[ $t == order_* ]] && dict=dicts/order.dict
    flags=(-print_final_stats=1 -artifact_prefix=artifacts/"$t"/)
    if [[ -f $dict ]]; then flags+=(-dict="$dict"); fi
}

# CPU seconds used so far by process $1 and its waited-for children (utime+stime, /proc/PID/stat);
# -1 once it has exited.
ticks_per_second=$(getconf CLK_TCK)
cpu_seconds() {
    local stat
    { stat=$(< /proc/"$1"/stat); } 2>/dev/null || { echo -1; return; }
    read -r -a f <<< "${stat##*) }"
    [[ ${f[0]} == Z ]] && { echo -1; return; }    # exited, not yet waited for
    echo $(( (f[11] + f[12] + f[13] + f[14]) / ticks_per_second ))
}

failed=()
if $by_cpu; then
    declare -A pids used
    for t in "${targets[@]}"; do
        target_args "$t"
        echo "== $t: until ${seconds} CPU-seconds, corpus ${corpus[*]}"
        "$bin/$t" "${flags[@]}" "${corpus[@]}" > artifacts/"$t"/fuzz.log 2>&1 &
        pids[$t]=$!
    done
    running=${#targets[@]}
    while (( running > 0 )); do
        sleep 5
        running=0
        for t in "${targets[@]}"; do
            [[ -n ${pids[$t]} ]] || continue
            cpu=$(cpu_seconds "${pids[$t]}")
            if (( cpu < 0 )); then    # exited by itself: a failure (libFuzzer stops at the first)
                wait "${pids[$t]}" || true
                failed+=("$t"); pids[$t]=""
            elif (( cpu >= seconds )); then
                used[$t]=$cpu
                kill -INT "${pids[$t]}"; wait "${pids[$t]}" || true; pids[$t]=""
            else
                used[$t]=$cpu; running=$((running + 1))
            fi
        done
    done
    { printf '%-16s %8s %8s %8s\n' target cpu_s files KiB
      for t in "${targets[@]}"; do
          printf '%-16s %8s %8s %8s\n' "$t" "${used[$t]:-0}" "$(find corpus/"$t" -type f | wc -l)" "$(du -sk corpus/"$t" | cut -f1)"
      done; } | tee cpu-report.txt
else
    for t in "${targets[@]}"; do
        target_args "$t"
        echo "== $t: ${seconds}s, corpus ${corpus[*]}"
        if ! cargo +nightly fuzz run -a "$t" "${corpus[@]}" -- -max_total_time="$seconds" "${flags[@]}"; then
            failed+=("$t")
        fi
    done
fi
if (( ${#failed[@]} > 0 )); then
    echo "fuzz.sh: failures in: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${seconds} $($by_cpu && echo CPU-)seconds each, no failures"
