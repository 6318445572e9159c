#!/usr/bin/env bash
# Installs xsort, gensort, valsort and xsort-bench, with their manual pages and bash, zsh and fish
# completions, and the cluster sort xsort-mpi where Open MPI's headers are installed, under PREFIX
# (default: $HOME/.local):
#
#   bash scripts/install.sh [PREFIX]
#
#   PREFIX/bin/{xsort,gensort,valsort,xsort-bench}
#   PREFIX/bin/nsort                a link to xsort, which by that name reads Nsort's command line
#   PREFIX/bin/xsort-mpi            (only with Open MPI's headers: Debian's libopenmpi-dev)
#   PREFIX/share/man/man1/NAME.1
#   PREFIX/share/bash-completion/completions/NAME
#   PREFIX/share/zsh/site-functions/_NAME
#   PREFIX/share/fish/vendor_completions.d/NAME.fish
#   PREFIX/lib/libxsort.so, PREFIX/lib/libxsort.a   the C library (crates/capi)
#   PREFIX/lib/libnsort.so          a link to libxsort.so, for programs that load Nsort by name
#   PREFIX/include/xsort.h, PREFIX/include/nsort.h, PREFIX/include/nsorterrno.h (nsort.h includes it)
#   PREFIX/lib/pkgconfig/xsort.pc   (pkg-config --cflags --libs xsort)
#
# It builds the release binaries first (cargo build --release --locked; cargo's progress shows).
# xsort-mpi is built on its own (cargo build -p xsort-mpi, which needs Open MPI's headers and
# libclang), only where `mpicc --showme:incdirs` or `pkg-config ompi` names a directory holding
# mpi.h; otherwise the script says why it skips it. XSORT_INSTALL_MPI=0 skips it in any case.
# XSORT_INSTALL_FROM=DIR installs the binaries already in DIR instead of building (the tests use
# it; xsort-mpi where DIR has it).
# The pages and completions come from the installed binaries themselves (hidden flags
# --generate-man DIR and --generate-completions DIR), so they describe exactly what was installed.
set -euo pipefail
prefix=${1:-$HOME/.local}
# The repository holding this script, through any link to its directory (the headers are found there).
root=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
names=(xsort gensort valsort xsort-bench)

# The directory holding Open MPI's mpi.h, as the mpi crate's build finds it (the MPICC wrapper or
# mpicc, then pkg-config); nothing when there is none.
mpi_headers() {
  local dirs dir
  dirs=$("${MPICC:-mpicc}" --showme:incdirs 2>/dev/null || pkg-config --cflags-only-I ompi 2>/dev/null || true)
  for dir in $dirs; do
    dir=${dir#-I}
    if [[ -f $dir/mpi.h ]]; then
      echo "$dir"
      return
    fi
  done
}

# Whether to install xsort-mpi (mpi=1), or why not (skip).
mpi=0
skip=
if [[ ${XSORT_INSTALL_MPI:-} == 0 ]]; then
  skip="XSORT_INSTALL_MPI=0"
elif [[ -n ${XSORT_INSTALL_FROM:-} ]]; then
  if [[ -x $XSORT_INSTALL_FROM/xsort-mpi ]]; then mpi=1; else skip="$XSORT_INSTALL_FROM has no xsort-mpi"; fi
elif headers=$(mpi_headers) && [[ -n $headers ]]; then
  mpi=1
else
  skip="Open MPI's headers (mpi.h) were not found by mpicc --showme:incdirs or pkg-config ompi; install them (Debian: apt-get install openmpi-bin libopenmpi-dev libclang-dev) and run this again"
fi
if ((!mpi)); then
  echo "install.sh: skipping xsort-mpi (the cluster sort): $skip" >&2
fi

if [[ -n ${XSORT_INSTALL_FROM:-} ]]; then
  from=$XSORT_INSTALL_FROM
else
  echo "install.sh: building the release binaries (the first build takes a few minutes)" >&2
  cargo build --release --locked --manifest-path "$root/Cargo.toml" -p xsort -p xsort-sortbench -p xsort-bench -p xsort-capi
  if ((mpi)); then
    echo "install.sh: building xsort-mpi (Open MPI's headers are in $headers)" >&2
    if ! cargo build --release --locked --manifest-path "$root/Cargo.toml" -p xsort-mpi; then
      echo "install.sh: xsort-mpi did not build (see cargo's error above; its build also needs libclang:" \
        "Debian's libclang-dev); nothing was installed. XSORT_INSTALL_MPI=0 installs the rest without it" >&2
      exit 1
    fi
  fi
  target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
  from=$target/release
fi
for name in "${names[@]}"; do
  [[ -x $from/$name ]] || { echo "install.sh: $from/$name is missing or not executable" >&2; exit 1; }
done
# A test build (cargo test) leaves the C library in the profile's deps/ directory.
libfrom=$from
[[ -f $libfrom/libxsort.so ]] || libfrom=$from/deps
for lib in libxsort.so libxsort.a; do
  [[ -f $libfrom/$lib ]] || { echo "install.sh: $lib is in neither $from nor $from/deps" >&2; exit 1; }
done

man=$prefix/share/man/man1
bash_dir=$prefix/share/bash-completion/completions
zsh_dir=$prefix/share/zsh/site-functions
fish_dir=$prefix/share/fish/vendor_completions.d
install -d "$prefix/bin" "$man" "$bash_dir" "$zsh_dir" "$fish_dir"
for name in "${names[@]}"; do
  install -m 755 "$from/$name" "$prefix/bin/$name"
done
ln -sfn xsort "$prefix/bin/nsort"
if ((mpi)); then
  install -m 755 "$from/xsort-mpi" "$prefix/bin/xsort-mpi"
fi

# The C library, its headers, the name programs written for Nsort load, and a pkg-config file.
lib=$prefix/lib
install -d "$lib/pkgconfig" "$prefix/include"
install -m 755 "$libfrom/libxsort.so" "$lib/libxsort.so"
install -m 644 "$libfrom/libxsort.a" "$lib/libxsort.a"
ln -sfn libxsort.so "$lib/libnsort.so"
install -m 644 "$root/crates/capi/include/"{xsort.h,nsort.h,nsorterrno.h} "$prefix/include/"
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -1)
cat > "$lib/pkgconfig/xsort.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: xsort
Description: xsort's C library (libxsort), with Nsort's calls in nsort.h
Version: $version
Libs: -L\${libdir} -lxsort
Libs.private: -lpthread -ldl -lm
Cflags: -I\${includedir}
EOF

gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
# xsort documents itself; xsort-bench documents itself and the two reference tools, whose command
# lines must stay exactly the reference's and so take no extra flags.
"$prefix/bin/xsort" --generate-man "$gen" --generate-completions "$gen"
"$prefix/bin/xsort-bench" --generate-man "$gen" --generate-completions "$gen"
for name in "${names[@]}"; do
  install -m 644 "$gen/$name.1" "$man/$name.1"
  install -m 644 "$gen/$name.bash" "$bash_dir/$name"
  install -m 644 "$gen/_$name" "$zsh_dir/_$name"
  install -m 644 "$gen/$name.fish" "$fish_dir/$name.fish"
done

installed=("${names[@]}")
((mpi)) && installed+=(xsort-mpi)
echo "installed ${installed[*]} into $prefix/bin (and nsort -> xsort), manual pages into $man,"
echo "completions into $bash_dir, $zsh_dir and $fish_dir,"
echo "the C library into $lib (libxsort.so, libxsort.a, libnsort.so -> libxsort.so), headers (xsort.h, nsort.h, nsorterrno.h) into $prefix/include"
echo "build a C program with: cc prog.c \$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs xsort) -Wl,-rpath,$lib"
if ((mpi)); then
  # mpirun looks the program up on the PATH it passes to the ranks; Open MPI refuses to run as
  # root without --allow-run-as-root.
  as_root=
  [[ $(id -u) == 0 ]] && as_root="--allow-run-as-root "
  echo "run the cluster sort as: mpirun ${as_root}-np 2 $prefix/bin/xsort-mpi [options] -o OUTPUT INPUT..."
  command -v mpirun >/dev/null || echo "note: mpirun is not on PATH (Debian: apt-get install openmpi-bin)"
else
  echo "xsort-mpi (the cluster sort) skipped: $skip"
fi
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH" ;;
esac
