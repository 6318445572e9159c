#!/usr/bin/env bash
# Installs, with apt-get, the Debian packages the tests need when they are missing (run as root on
# a fresh machine; does nothing when all are there):
# - GNU coreutils 9.x (`sort`: the differential tests compare with it), util-linux's setpriv and
#   mount and bsdutils' script (the fault matrix mounts small tmpfs file systems and runs commands
#   as nobody), iproute2's ip (crates/mpi/tests/hosts.rs makes its hosts from network
#   namespaces; not in a minimal Debian), gzip (--compress-program), gzip, zstd, bzip2 and xz
#   (the compressed-file tests make their inputs and read xsort's outputs with the formats' own
#   tools), python3 with its venv module
#   (scripts/check-msrv.sh, the Python package's tests);
# - Open MPI with its headers, and libclang for the bindings the mpi crate generates (cluster mode,
#   crates/mpi: its tests run mpirun on this one machine);
# - Debian's locales, and from them the UTF-8 locales en_US, de_DE and sv_SE and the 8-bit
#   fr_FR.ISO-8859-1 (the locale tests sort in them beside GNU sort), and fr_FR.UTF-8 (GNU's own
#   tests use both French ones), generated with localedef into the system's locale archive;
# - a deb-src line for Debian's sources (scripts/gnu-tests.sh fetches coreutils' source with
#   `apt-get source`), added when APT has none.
set -euo pipefail
missing=()
for tool in sort:coreutils setpriv:util-linux script:bsdutils mount:mount ip:iproute2 gzip:gzip zstd:zstd bzip2:bzip2 xz:xz-utils python3:python3; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
for pkg in openmpi-bin libopenmpi-dev libclang-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
command -v localedef >/dev/null 2>&1 && [ -d /usr/share/i18n/locales ] || missing+=(locales)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -q && apt-get install -y -q "${missing[@]}"
fi
installed_locales=$(locale -a 2>/dev/null || true)
for name in en_US de_DE sv_SE fr_FR; do
  grep -qx "$name.utf8" <<<"$installed_locales" || localedef -i "$name" -f UTF-8 "$name.UTF-8"
done
grep -qx "fr_FR.iso88591" <<<"$installed_locales" || localedef -i fr_FR -f ISO-8859-1 fr_FR.ISO-8859-1
if ! grep -rqs '^deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/ && ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/; then
  echo 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main' \
    > /etc/apt/sources.list.d/xsort-deb-src.list
  apt-get update -q
fi
