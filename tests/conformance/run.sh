#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16, pinned)
# against sluice's stdio front end: `sluice serve --expose all --passthrough` fronting the
# C++ conformance fixture, bridged to Streamable HTTP by supergateway --stateful (pinned),
# on 127.0.0.1 only. Known failures are in baseline-stdio.yml; the runner fails on a new
# failure and on a baselined check that passes.
# Usage: bash tests/conformance/run.sh SLUICE_BINARY CONFORMANCE_SERVER   (ctest: conformance)
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 SLUICE_BINARY CONFORMANCE_SERVER" >&2
  exit 2
fi
sluice="$(realpath -- "$1")"
fixture="$(realpath -- "$2")"
cd -- "$(dirname -- "${BASH_SOURCE[0]}")"
here="$(pwd)"

if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund >/dev/null
fi

work="$(mktemp -d)"
bridge_pid=""
cleanup() {
  if [[ -n "$bridge_pid" ]]; then
    kill -TERM -- "-$bridge_pid" 2>/dev/null || true
    wait "$bridge_pid" 2>/dev/null || true
  fi
  rm -rf -- "$work"
}
trap cleanup EXIT

printf '{"mcpServers":{"conformance":{"command":"%s"}}}\n' "$fixture" > "$work/mcp.json"

# A free loopback port: try a few random ones (bounded).
port=""
for _ in $(seq 20); do
  candidate=$((20000 + RANDOM % 20000))
  if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then
    port=$candidate
    break
  fi
done
[[ -n "$port" ]] || { echo "run.sh: no free loopback port found" >&2; exit 1; }

# The bridge in its own process group (setsid), bounded by timeout, bound to 127.0.0.1.
HOME="$work" NODE_OPTIONS="--require $here/shim/loopback.cjs" setsid timeout 600 \
  node node_modules/supergateway/dist/index.js \
  --stdio "$sluice serve --no-discover --config $work/mcp.json --expose all --passthrough --log-level warn" \
  --outputTransport streamableHttp --stateful --port "$port" >"$work/bridge.log" 2>&1 &
bridge_pid=$!

# Wait (bounded) until it listens.
for _ in $(seq 200); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  if ! kill -0 "$bridge_pid" 2>/dev/null; then
    cat "$work/bridge.log" >&2
    exit 1
  fi
  sleep 0.05
done

status=0
timeout 300 node --import "$here/shim/register.mjs" \
  node_modules/@modelcontextprotocol/conformance/dist/index.js server \
  --url "http://127.0.0.1:$port/mcp" --expected-failures "$here/baseline-stdio.yml" \
  >"$work/suite.log" 2>&1 || status=$?
sed -n '/=== SUMMARY ===/,$p' "$work/suite.log"
if [[ $status -ne 0 ]]; then
  grep -E "✗|FAILURE|Error" "$work/suite.log" | head -40 >&2 || true
fi
exit "$status"
