"""The commands the package installs: xsort, gensort, valsort, and python -m xsort."""

import os
import subprocess
import sys

import xsort

BIN = os.path.dirname(sys.executable)


def run(*argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, **kwargs)


def test_xsort_version_and_python_m():
    done = run(os.path.join(BIN, "xsort"), "--version")
    assert done.returncode == 0 and done.stdout.strip() == f"xsort {xsort.__version__}"
    done = run(sys.executable, "-m", "xsort", "--help")
    assert done.returncode == 0 and "Usage: xsort" in done.stdout


def test_gensort_xsort_valsort_round_trip(tmp_path):
    data, out = tmp_path / "data", tmp_path / "sorted"
    assert run(os.path.join(BIN, "gensort"), "20000", str(data)).returncode == 0
    assert run(os.path.join(BIN, "xsort"), "--record-size=100", "--key-bytes=0:10", "-o", str(out), str(data)).returncode == 0
    done = run(os.path.join(BIN, "valsort"), str(out))
    assert done.returncode == 0, done.stderr
    assert "SUCCESS" in done.stdout + done.stderr
    done = run(os.path.join(BIN, "valsort"), str(data))
    assert done.returncode != 0
    assert xsort.sort_file(data, tmp_path / "py", record_size=100, keys="0:10")["records"] == 20000
    assert (tmp_path / "py").read_bytes() == out.read_bytes()


def test_xsort_errors_exit_2_with_one_line(tmp_path):
    done = run(sys.executable, "-m", "xsort", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"xsort: cannot read: {tmp_path / 'missing'}: No such file or directory"
