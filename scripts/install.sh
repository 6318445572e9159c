#!/usr/bin/env bash
# Installs xsort, gensort, valsort and xsort-bench, with their manual pages and bash, zsh and fish
# completions, under PREFIX (default: $HOME/.local):
#
#   bash scripts/install.sh [PREFIX]
#
#   PREFIX/bin/{xsort,gensort,valsort,xsort-bench}
#   PREFIX/share/man/man1/NAME.1
#   PREFIX/share/bash-completion/completions/NAME
#   PREFIX/share/zsh/site-functions/_NAME
#   PREFIX/share/fish/vendor_completions.d/NAME.fish
#
# It builds the release binaries first (cargo build --release --locked; cargo's progress shows).
# XSORT_INSTALL_FROM=DIR installs the binaries already in DIR instead of building (the tests use it).
# The pages and completions come from the installed binaries themselves (hidden flags
# --generate-man DIR and --generate-completions DIR), so they describe exactly what was installed.
set -euo pipefail
prefix=${1:-$HOME/.local}
root=$(cd "$(dirname "$0")/.." && pwd)
names=(xsort gensort valsort xsort-bench)

if [[ -n ${XSORT_INSTALL_FROM:-} ]]; then
  from=$XSORT_INSTALL_FROM
else
  echo "install.sh: building the release binaries (the first build takes a few minutes)" >&2
  cargo build --release --locked --manifest-path "$root/Cargo.toml" -p xsort -p xsort-sortbench -p xsort-bench
  target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
  from=$target/release
fi
for name in "${names[@]}"; do
  [[ -x $from/$name ]] || { echo "install.sh: $from/$name is missing or not executable" >&2; exit 1; }
done

man=$prefix/share/man/man1
bash_dir=$prefix/share/bash-completion/completions
zsh_dir=$prefix/share/zsh/site-functions
fish_dir=$prefix/share/fish/vendor_completions.d
install -d "$prefix/bin" "$man" "$bash_dir" "$zsh_dir" "$fish_dir"
for name in "${names[@]}"; do
  install -m 755 "$from/$name" "$prefix/bin/$name"
done

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

echo "installed ${names[*]} into $prefix/bin, manual pages into $man,"
echo "completions into $bash_dir, $zsh_dir and $fish_dir"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH" ;;
esac
