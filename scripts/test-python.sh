#!/usr/bin/env bash
# The Python package's tests: builds crates/python with pip (maturin comes through pip's build
# isolation, the extension and the commands are compiled by cargo) into a virtualenv of its own,
# target/pyenv, and runs its pytest tests against numpy, pandas and Polars (the references of the
# DataFrame sorts, installed here so that their tests fail rather than skip without them; pyarrow
# for pandas' Arrow-backed strings). Needs python3 with venv, and PyPI.
#
#   bash scripts/test-python.sh [PYTEST ARGS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/target/pyenv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$root/crates/python" numpy pandas polars pyarrow pytest
cd "$root/crates/python/tests"
"$venv/bin/python" -m pytest -q "$@"
