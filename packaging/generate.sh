#!/usr/bin/env bash
# Generates, from the built binary's own --help, what the package ships beside it:
#   OUTDIR/sluice.1.gz  the man page (help2man over `sluice --help` and `--version`, with
#                       packaging/sluice.h2m and a COMMANDS section: each command's --help)
#   OUTDIR/sluice.bash  bash completion
#   OUTDIR/_sluice      zsh completion
# Commands are read from each help's "Subcommands:" list (recursively), options from its
# option lines, so a new command or option is in all three without editing anything here.
# Usage: generate.sh SLUICE_BINARY STATIC_H2M OUTDIR
set -euo pipefail

sluice=$1
static_h2m=$2
out=$3
mkdir -p "$out"
export COLUMNS=80

# The help of a command path ("" for the top level, "auth login" for a nested one).
help_of() {
  # shellcheck disable=SC2086
  "$sluice" $1 --help
}

# The commands a help lists under "Subcommands:".
commands_in() {
  awk '/^Subcommands:/ { on = 1; next }
       on && /^[^ ]/ { on = 0 }
       on && /^  [a-z][a-z0-9-]*( |$)/ { print $1 }'
}

# The options of a help, one per line as "NAME KIND": KIND is file, dir, value or flag.
options_in() {
  awk '/^[A-Za-z][A-Za-z ]*:$/ { section = $0 }
       section != "Subcommands:" && /^  -/ {
         line = substr($0, 3)
         split_at = index(line, "  ")
         names = split_at ? substr(line, 1, split_at - 1) : line
         n = split(names, words, " ")
         kind = "flag"
         if (n > 1) kind = (words[2] == "FILE") ? "file" : (words[2] == "DIR") ? "dir" : "value"
         m = split(words[1], alternatives, ",")
         for (i = 1; i <= m; i++) print alternatives[i], kind
       }'
}

# Every command path, breadth first: "" then "serve", "auth", "auth login", ...
paths=("")
for ((i = 0; i < ${#paths[@]}; i++)); do
  while read -r command; do
    paths+=("${paths[i]:+${paths[i]} }$command")
  done < <(help_of "${paths[i]}" | commands_in)
done

# --- the man page ------------------------------------------------------------------------
commands_h2m=$out/commands.h2m
{
  echo "[COMMANDS]"
  for path in "${paths[@]:1}"; do
    echo ".SS \"sluice $path\""
    echo ".nf"
    help_of "$path" | sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
    echo ".fi"
  done
} >"$commands_h2m"
help2man --no-info --section=1 --name="one MCP server in front of many" \
  --include="$static_h2m" --include="$commands_h2m" --output="$out/sluice.1" "$sluice"
gzip -9nf "$out/sluice.1"

# --- completions -------------------------------------------------------------------------
# Shell `case` bodies: the subcommands and the options of each path, and the options that
# take a file, a folder or another value.
commands_case="" options_case="" file_opts="" dir_opts="" value_opts=""
for path in "${paths[@]}"; do
  help=$(help_of "$path")
  subs=$(commands_in <<<"$help" | tr '\n' ' ')
  opts=""
  while read -r name kind; do
    [[ -z "$name" ]] && continue
    opts+="$name "
    case $kind in
      file) file_opts+="|\"$path|$name\"" ;;
      dir) dir_opts+="|\"$path|$name\"" ;;
      value) value_opts+="|\"$path|$name\"" ;;
    esac
  done < <(options_in <<<"$help")
  commands_case+="    \"$path\") echo \"${subs% }\" ;;"$'\n'
  options_case+="    \"$path\") echo \"${opts% }\" ;;"$'\n'
done
file_opts=${file_opts#|} dir_opts=${dir_opts#|} value_opts=${value_opts#|}
: "${file_opts:=\"\"}" "${dir_opts:=\"\"}" "${value_opts:=\"\"}"

functions="_sluice_commands() {
  case \"\$1\" in
${commands_case}  esac
}
_sluice_options() {
  case \"\$1\" in
${options_case}  esac
}"

cat >"$out/sluice.bash" <<EOF
# bash completion for sluice, generated from its --help (packaging/generate.sh).
$functions
_sluice() {
  local cur prev words cword
  _init_completion || return
  local path="" i
  for ((i = 1; i < cword; i++)); do
    case " \$(_sluice_commands "\$path") " in
      *" \${words[i]} "*) path="\${path:+\$path }\${words[i]}" ;;
    esac
  done
  case "\$path|\$prev" in
    $file_opts) _filedir; return ;;
    $dir_opts) _filedir -d; return ;;
    $value_opts) return ;;
  esac
  local commands
  commands=\$(_sluice_commands "\$path")
  if [[ "\$cur" == -* || -z "\$commands" ]]; then
    mapfile -t COMPREPLY < <(compgen -W "\$(_sluice_options "\$path")" -- "\$cur")
  else
    mapfile -t COMPREPLY < <(compgen -W "\$commands" -- "\$cur")
  fi
}
complete -F _sluice sluice
EOF

cat >"$out/_sluice" <<EOF
#compdef sluice
# zsh completion for sluice, generated from its --help (packaging/generate.sh).
$functions
_sluice() {
  local path="" i
  for ((i = 2; i < CURRENT; i++)); do
    if [[ " \$(_sluice_commands "\$path") " == *" \${words[i]} "* ]]; then
      path="\${path:+\$path }\${words[i]}"
    fi
  done
  case "\$path|\${words[CURRENT-1]}" in
    $file_opts) _files; return ;;
    $dir_opts) _files -/; return ;;
    $value_opts) _message 'value'; return ;;
  esac
  local commands=\$(_sluice_commands "\$path")
  if [[ "\$PREFIX" == -* || -z "\$commands" ]]; then
    compadd -- \${=\$(_sluice_options "\$path")}
  else
    compadd -- \${=commands}
  fi
}
_sluice "\$@"
EOF
