#!/usr/bin/env bash
# All the tests: installs what they need when missing (scripts/prerequisites.sh), then the Rust
# tests of the whole workspace (the C API's C programs and the cluster tests under mpirun among
# them), the Python package's tests (scripts/test-python.sh) and GNU coreutils' own sort tests
# (scripts/gnu-tests.sh). All build with the `testing` profile (release's optimization without
# link-time optimization: see Cargo.toml), in target/testing, so that the Python package's commands
# and GNU's tests run the program the Rust tests built.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/prerequisites.sh
export XSORT_CARGO_PROFILE=testing
cargo test --workspace --profile "$XSORT_CARGO_PROFILE"
echo "== the Rust tests took ${SECONDS} s; now the Python package's"
bash scripts/test-python.sh
echo "== the Python tests ended at ${SECONDS} s; now GNU coreutils' sort tests"
bash scripts/gnu-tests.sh
echo "== all the tests took ${SECONDS} s"
