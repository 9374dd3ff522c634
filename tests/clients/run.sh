#!/usr/bin/env bash
# End-to-end test with the real MCP clients: Claude Code, Gemini CLI and Codex, installed from
# npm at the versions pinned in package.json and package-lock.json, each list sluice as a
# connected server after `sluice setup --client X` (clients.test.mjs says how, offline).
#
# Usage: bash tests/clients/run.sh SLUICE_BINARY      (ctest: e2e_real_clients, label e2e)
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 SLUICE_BINARY" >&2
  exit 2
fi
if [[ ! -x "$1" ]]; then
  echo "run.sh: $1 is not an executable file" >&2
  exit 2
fi
# Resolve before the cd below so a relative path keeps working.
SLUICE_BINARY="$(realpath -- "$1")"
export SLUICE_BINARY

cd -- "$(dirname -- "${BASH_SOURCE[0]}")"

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "run.sh: '$tool' not found in PATH (the e2e test needs Node.js 20+ and npm)" >&2
    exit 2
  fi
done

# npm writes node_modules/.package-lock.json last when it finishes an install. Optional
# dependencies stay: Claude Code's and Codex's native binaries are optional per platform.
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund
fi

exec node --test --test-reporter=spec --test-concurrency=1 clients.test.mjs
