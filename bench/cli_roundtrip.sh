#!/usr/bin/env bash
# Measures, on this machine: the median wall time of N `sluice call` round trips to the
# fixture echo tool (each one a whole gateway: start, spawn, initialize, list, validate,
# call, teardown), and sluice's peak RSS (VmHWM) while serving three fixture downstreams.
# Usage: bench/cli_roundtrip.sh [BUILD_DIR] [N]
set -euo pipefail
build="${1:-build}"
n="${2:-20}"
sluice="$build/src/sluice"
fixture="$build/tests/fixtures/fixture_server"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/one.json" <<JSON
{"mcpServers":{"fx":{"command":"$(realpath "$fixture")"}}}
JSON
times=()
for _ in $(seq "$n"); do
  t0=$(date +%s%N)
  HOME="$tmp" "$sluice" call fx::echo --args '{"text":"hi"}' --no-discover --config "$tmp/one.json" \
    --log-level off > /dev/null
  t1=$(date +%s%N)
  times+=($(((t1 - t0) / 1000)))
done
sorted=($(printf '%s\n' "${times[@]}" | sort -n))
echo "sluice call fx::echo: median $((sorted[n / 2] / 1000)).$(((sorted[n / 2] % 1000) / 100)) ms over $n runs (min $((sorted[0] / 1000)) ms, max $((sorted[n - 1] / 1000)) ms)"

cat > "$tmp/three.json" <<JSON
{"mcpServers":{"a":{"command":"$(realpath "$fixture")"},"b":{"command":"$(realpath "$fixture")"},
 "c":{"command":"$(realpath "$fixture")","args":["--tools=200"]}},"autoStart":["a","b","c"]}
JSON
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
coproc SL { HOME="$tmp" exec "$sluice" serve --no-discover --config "$tmp/three.json" --log-level off; }
echo "$init" >&"${SL[1]}"
read -r _ <&"${SL[0]}"
# Wait (bounded) until all three servers are online, then exercise each once.
for i in $(seq 100); do
  echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gateway.health","arguments":{}}}' >&"${SL[1]}"
  read -r health <&"${SL[0]}"
  [[ $(grep -o '\\"status\\":\\"online\\"' <<<"$health" | wc -l) -ge 3 ]] && break
done
for s in a b c; do
  echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"gateway.invoke","arguments":{"tool_id":"'$s'::echo","arguments":{"text":"x"}}}}' >&"${SL[1]}"
  read -r _ <&"${SL[0]}"
done
echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"gateway.catalog_search","arguments":{"query":"search issues"}}}' >&"${SL[1]}"
read -r _ <&"${SL[0]}"
echo "sluice serving 3 downstreams: $(grep -E 'VmHWM|VmRSS' /proc/$SL_PID/status | tr -s ' \t' ' ' | tr '\n' ' ')"
exec {SL[1]}>&-
wait "$SL_PID"
