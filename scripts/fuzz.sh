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
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]     (default: 60 seconds, every target)
#   e.g. nice -n 10 scripts/fuzz.sh 300 spec order_numeric
set -euo pipefail
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
failed=()
for t in "${targets[@]}"; do
    corpus=(corpus/"$t")
    mkdir -p corpus/"$t"
    for dir in seeds/"$t" regressions/"$t"; do
        [[ -d $dir ]] && corpus+=("$dir")
    done
    # A dictionary of the target's words, where there is one (order.dict serves every order_* target).
    dict=dicts/"$t".dict
    [[ $t == order_* ]] && dict=dicts/order.dict
    flags=(-max_total_time="$seconds" -print_final_stats=1)
    [[ -f $dict ]] && flags+=(-dict="$dict")
    echo "== $t: ${seconds}s, corpus ${corpus[*]}"
    if ! cargo +nightly fuzz run -a "$t" "${corpus[@]}" -- "${flags[@]}"; then
        failed+=("$t")
    fi
done
if (( ${#failed[@]} > 0 )); then
    echo "fuzz.sh: failures in: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${seconds}s each, no failures"
