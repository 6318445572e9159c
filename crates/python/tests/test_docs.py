"""The Python examples of the docs run as printed: every ```python block of docs/PYTHON.md and
README.md, each in an empty directory, and every ```console block of docs/PYTHON.md, whose commands
must print what the block shows."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BIN = os.path.dirname(sys.executable)


def blocks(doc, lang):
    text = (ROOT / doc).read_text()
    return re.findall(r"^```" + lang + r"\n(.*?)^```$", text, re.S | re.M)


def test_the_docs_have_python_examples():
    assert blocks("docs/PYTHON.md", "python"), "docs/PYTHON.md has no ```python block"
    assert blocks("README.md", "python"), "README.md has no ```python block"
    assert blocks("docs/PYTHON.md", "console"), "docs/PYTHON.md has no ```console block"


@pytest.mark.parametrize("doc", ["docs/PYTHON.md", "README.md"])
def test_python_blocks_run_as_printed(doc, tmp_path):
    for i, code in enumerate(blocks(doc, "python")):
        work = tmp_path / str(i)
        work.mkdir()
        done = subprocess.run([sys.executable, "-c", code], cwd=work, capture_output=True, text=True)
        assert done.returncode == 0, f"{doc}, python block {i + 1}:\n{code}\n{done.stderr}"


def test_console_blocks_print_what_they_show(tmp_path):
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    for block in blocks("docs/PYTHON.md", "console"):
        # "$ command" lines, each followed by what it prints (standard output and error together).
        steps = re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n)*)", block, re.M)
        assert steps, block
        for command, shown in steps:
            done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True)
            said = done.stdout + done.stderr
            assert done.returncode == 0, f"{command}\n{said}"
            assert said == shown, f"{command} printed:\n{said}\nthe docs show:\n{shown}"
