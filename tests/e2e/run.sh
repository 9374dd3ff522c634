#!/usr/bin/env bash
# End-to-end test: the official MCP TypeScript SDK client drives the sluice binary, which
# fronts @modelcontextprotocol/server-everything. Versions are pinned in package.json and
# package-lock.json.
#
# Usage: bash tests/e2e/run.sh SLUICE_BINARY      (ctest: label e2e)
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

# npm writes node_modules/.package-lock.json last when it finishes an install, so it stands
# for "node_modules is complete and matches the lock file as of that moment".
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund
fi

exec node --test --test-reporter=spec sdk_client.test.mjs sdk_cancel.test.mjs sdk_http.test.mjs \
  sdk2_modern.test.mjs \
  sdk_remote.test.mjs
