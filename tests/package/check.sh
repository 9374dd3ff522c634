#!/usr/bin/env bash
# The package test (ctest label `package`): builds the .deb from the build directory's binary
# (cpack, as `make package` does) and checks what it holds: the stripped binary, the gzipped man
# page with every command in it, the bash and zsh completions naming every command, and the
# systemd user unit with its sandbox, which `systemd-analyze verify --user` accepts offline.
# Changes nothing outside a scratch folder and the build directory's package files.
# Usage: check.sh BUILD_DIR
set -euo pipefail

build=$1
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

cmake --build "$build" --target sluice sluice_docs >/dev/null
(cd "$build" && cpack -G DEB >/dev/null) || fail "cpack -G DEB failed"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
deb=$(ls "$build"/sluice_"$version"_*.deb 2>/dev/null | head -n 1)
[[ -f "$deb" ]] || fail "no sluice_${version}_*.deb in $build"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
dpkg-deb -x "$deb" "$scratch/root"
dpkg-deb -I "$deb" >"$scratch/info"
dpkg-deb -c "$deb" >"$scratch/contents"
root=$scratch/root

# Control fields.
grep -q "^ Package: sluice$" "$scratch/info" || fail "the package is not named sluice"
grep -q "^ Version: $version$" "$scratch/info" || fail "the version is not $version"
grep -q "^ Maintainer: ." "$scratch/info" || fail "no Maintainer"
grep -q "^ Description: ." "$scratch/info" || fail "no Description"
grep -Eq "^ Depends: .*libc6" "$scratch/info" || fail "Depends was not computed (dpkg-shlibdeps)"

# Files.
for f in usr/bin/sluice usr/share/man/man1/sluice.1.gz \
  usr/share/bash-completion/completions/sluice usr/share/zsh/vendor-completions/_sluice \
  usr/lib/systemd/user/sluice.service; do
  [[ -f "$root/$f" ]] || fail "the package lacks /$f"
done
if grep -E '^-' "$scratch/contents" | grep -Ev '^-rw-r--r-- |^-rwxr-xr-x '; then
  fail "a file with unexpected permissions"
fi

# The binary: stripped (no debug sections, no symbol table) and it runs.
if readelf -S --wide "$root/usr/bin/sluice" | grep -Eq '\.debug_|\.symtab'; then
  fail "/usr/bin/sluice is not stripped"
fi
"$root/usr/bin/sluice" --version | grep -q "^sluice $version$" || fail "sluice --version"

# The commands, as the binary lists them (and those of commands that have commands).
commands=$("$root/usr/bin/sluice" --help | awk '/^Subcommands:/ {on=1; next} on && /^[^ ]/ {on=0}
  on && /^  [a-z][a-z0-9-]*( |$)/ {print $1}')
[[ -n "$commands" ]] || fail "sluice --help lists no command"

# The man page: gzip, a page man can render, every command in its COMMANDS section, the exit
# codes and the files.
gzip -t "$root/usr/share/man/man1/sluice.1.gz" || fail "the man page is not gzipped"
page=$(MANWIDTH=80 man -l "$root/usr/share/man/man1/sluice.1.gz" 2>/dev/null) ||
  fail "man cannot render the page"
for section in NAME SYNOPSIS DESCRIPTION OPTIONS COMMANDS "EXIT STATUS" FILES; do
  grep -q "^$section$" <<<"$page" || fail "the man page has no $section section"
done
for command in $commands; do
  grep -q "^   sluice $command$" <<<"$page" || fail "the man page does not describe $command"
  grep -q "\"$command\"" "$root/usr/share/bash-completion/completions/sluice" ||
    fail "the bash completion does not know $command"
  grep -q "\"$command\"" "$root/usr/share/zsh/vendor-completions/_sluice" ||
    fail "the zsh completion does not know $command"
done
bash -n "$root/usr/share/bash-completion/completions/sluice" || fail "bash completion syntax"
if command -v zsh >/dev/null; then zsh -n "$root/usr/share/zsh/vendor-completions/_sluice"; fi

# The bash completion completes: commands, then a command's options.
complete_words() {
  bash -c '_init_completion() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]};
      words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
    source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _sluice
    printf "%s\n" "${COMPREPLY[@]}"' _ "$root/usr/share/bash-completion/completions/sluice" "$@"
}
# grep without -q reads all its input: under pipefail, a grep -q that stops at the first match
# can kill the writer with SIGPIPE and fail the pipeline although the word was there.
complete_words sluice "" | grep -x serve >/dev/null ||
  fail "bash completion: sluice <TAB> lacks serve"
complete_words sluice serve --tra | grep -x -- --transport >/dev/null ||
  fail "bash completion: sluice serve --tra<TAB> lacks --transport"

# The unit: the sandbox directives, then systemd's own verification (offline, as a user
# unit, with ExecStart pointed at the extracted binary since /usr/bin/sluice may not exist).
unit=$root/usr/lib/systemd/user/sluice.service
for directive in "ExecStart=/usr/bin/sluice serve --transport http" NoNewPrivileges=yes \
  ProtectSystem=strict PrivateTmp=yes "ReadWritePaths=%S/sluice" Restart=on-failure \
  "EnvironmentFile=-%h/.config/sluice/http.env"; do
  grep -qx -- "$directive" "$unit" || fail "the unit lacks $directive"
done
mkdir -p "$scratch/units" "$scratch/runtime"
chmod 700 "$scratch/runtime"
sed "s|/usr/bin/sluice|$root/usr/bin/sluice|" "$unit" >"$scratch/units/sluice.service"
if ! verdict=$(XDG_RUNTIME_DIR=$scratch/runtime systemd-analyze verify --user --man=no \
  "$scratch/units/sluice.service" 2>&1) || [[ -n "$verdict" ]]; then
  fail "systemd-analyze verify --user: $verdict"
fi
echo "ok: $deb"
