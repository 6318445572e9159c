#!/usr/bin/env bash
# Checks that the workspace's declared `rust-version` (Cargo.toml, [workspace.package]) is at least
# the highest `rust-version` among the locked packages the workspace builds on this platform:
# every normal, build and dev dependency reachable from a workspace member, as Cargo.lock pins it.
# A lower declared version would promise a toolchain that cannot build the locked dependencies.
#
#   bash scripts/check-msrv.sh          # exit 0 when the declared version is high enough, 1 if not
#
# Needs cargo and python3 (no jq). Prints the declared version, the required one and the packages
# that require it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
host=$(rustc -vV | sed -n 's/^host: //p')
meta=$(mktemp)
trap 'rm -f "$meta"' EXIT
cargo metadata --format-version 1 --locked --filter-platform "$host" --manifest-path "$root/Cargo.toml" > "$meta"
python3 - "$meta" "$root/Cargo.toml" <<'PY'
import json, re, sys

meta = json.load(open(sys.argv[1]))
manifest = open(sys.argv[2]).read()


def version(text):
    """'1.85' or '1.85.0' as a comparable tuple (a missing patch is 0)."""
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


section = re.search(r"^\[workspace\.package\]\n(.*?)(?=^\[|\Z)", manifest, re.M | re.S)
declared = section and re.search(r'^rust-version\s*=\s*"([^"]+)"', section.group(1), re.M)
if not declared:
    sys.exit("check-msrv: Cargo.toml declares no rust-version in [workspace.package]")
declared = declared.group(1)

packages = {p["id"]: p for p in meta["packages"]}
# Every member must carry the declared version (`rust-version.workspace = true`), or cargo would not
# enforce it for that crate.
for pid in meta["workspace_members"]:
    if packages[pid].get("rust_version") != declared:
        sys.exit(f"check-msrv: FAILED: {packages[pid]['name']} does not inherit rust-version "
                 f"(add `rust-version.workspace = true` to its Cargo.toml)")
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
# Walk the resolved graph from the members: with --filter-platform, edges to crates for other
# targets are gone, so what is reached is what this machine compiles for tests, benches and bins.
seen, todo = set(), list(meta["workspace_members"])
while todo:
    pid = todo.pop()
    if pid in seen:
        continue
    seen.add(pid)
    todo.extend(dep["pkg"] for dep in nodes[pid]["deps"])

needs = [(packages[p]["rust_version"], packages[p]["name"], packages[p]["version"])
         for p in seen if packages[p].get("rust_version") and p not in meta["workspace_members"]]
if not needs:
    print(f"check-msrv: declared rust-version {declared}; no dependency declares one")
    sys.exit(0)
top = max(version(v) for v, _, _ in needs)
required = ".".join(str(x) for x in (top[:2] if top[2] == 0 else top))
by = sorted(f"{n} {v}" for r, n, v in needs if version(r) == top)
print(f"check-msrv: declared rust-version {declared}; the locked dependencies need {required} ({', '.join(by)}); {len(seen) - len(meta['workspace_members'])} dependencies checked")
if version(declared) < top:
    print(f"check-msrv: FAILED: raise rust-version in Cargo.toml to {required}", file=sys.stderr)
    sys.exit(1)
PY
