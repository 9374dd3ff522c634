#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against sluice,
# fronting the C++ conformance fixture (its only server, "conformance", with --expose all
# --passthrough), on 127.0.0.1 only. Known failures are in the mode's baseline file; the runner
# fails on a new failure (a WARNING counts too) and on a baselined check that passes.
#
# Usage: bash tests/conformance/run.sh [MODE] SLUICE_BINARY CONFORMANCE_SERVER
#   stdio       (the default when MODE is omitted) 0.1.16's active suite against the stdio front
#               end, bridged to Streamable HTTP by supergateway --stateful (pinned);
#               baseline-stdio.yml.                            ctest: conformance_stdio_via_supergateway
#   http        0.1.16's active suite against sluice's own HTTP front end
#               (sluice serve --transport http); baseline-http.yml.          ctest: conformance_http
#   stdio-alpha 0.2.0-alpha.12 with --requirements 2025-11-25 against the stdio front end behind
#               supergateway; baseline-stdio-alpha.yml.          ctest: conformance_stdio_alpha
#   http-alpha  0.2.0-alpha.12 (pinned in alpha/) with --requirements 2025-11-25 against the HTTP
#               front end; baseline-http-alpha.yml (entries may be `- scenario:check-id`).
#                                                                      ctest: conformance_http_alpha
#   http-2026   0.2.0-alpha.12 with --requirements 2026-07-28 (the stateless era) against the
#               HTTP front end; baseline-http-2026.yml.                ctest: conformance_http_2026
#   stdio-2026  0.2.0-alpha.12 with --requirements 2026-07-28 against the stdio front end, through
#               stdio-bridge-2026.mjs (HTTP to newline JSON-RPC, no header checks);
#               baseline-stdio-2026.yml.                              ctest: conformance_stdio_2026
#   http-2026-native, stdio-2026-native
#               the same two runs with the fixture in its 2026-07-28 form downstream
#               (conformance_server --era 2026-07-28: a 2026 server behind sluice, which offers
#               the tasks extension); baseline-http-2026-native.yml, baseline-stdio-2026-native.yml.
#               All four 2026 runs also require every check of the tasks-* extension scenarios
#               (which the runner does not score) to pass but for what their baseline lists
#               (tasks-verdict.mjs).
#                                ctest: conformance_http_2026_native, conformance_stdio_2026_native
#   client      0.2.0-alpha.12's CLIENT scenarios with --requirements 2025-11-25, sluice the client
#               under test: each scenario's server on 127.0.0.1, client/adapter.mjs points a sluice
#               config at its URL and drives sluice's stdio front end; baseline-client.yml, and
#               client/verdict.mjs also requires each scenario's check ids (client/
#               expected-checks.json). CONFORMANCE_SERVER is not used.  ctest: conformance_client
#   client-2026 the same CLIENT scenarios with --requirements 2026-07-28 (sluice probes each
#               scenario's server and speaks 2026-07-28 to it); baseline-client-2026.yml, judged
#               by the runner itself (its scenarios declare their checks and fail the ones never
#               emitted).                                          ctest: conformance_client_2026
set -euo pipefail

mode=stdio
if [[ $# -eq 3 ]]; then
  mode="$1"
  shift
fi
if [[ $# -ne 2 || ! "$mode" =~ ^(stdio|stdio-alpha|stdio-2026|stdio-2026-native|http|http-alpha|http-2026|http-2026-native|client|client-2026)$ ]]; then
  echo "usage: $0 [stdio|stdio-alpha|stdio-2026|stdio-2026-native|http|http-alpha|http-2026|http-2026-native|client|client-2026] SLUICE_BINARY CONFORMANCE_SERVER" >&2
  exit 2
fi
# The native modes: the same runs with the fixture in its 2026-07-28 form.
native=0
if [[ "$mode" == *-2026-native ]]; then
  native=1
  mode="${mode%-native}"
fi
sluice="$(realpath -- "$1")"
fixture="$(realpath -- "$2")"
cd -- "$(dirname -- "${BASH_SOURCE[0]}")"
here="$(pwd)"

# The runner's package directory: the stable suite (and supergateway) here, the alpha in alpha/.
pkg="$here"
[[ "$mode" == *-alpha || "$mode" == *-2026 || "$mode" == client* ]] && pkg="$here/alpha"
suffix=""
[[ $native -eq 1 ]] && suffix="-native"

# npm ci when node_modules is missing or older than the lock. Serialised on the lock file (npm ci
# never writes it), so conformance tests started in parallel (ctest -j) don't install over each
# other. The stdio modes also need supergateway, from the stable directory.
for dir in "$pkg" "$here"; do
  (
    cd -- "$dir"
    exec 9<package-lock.json
    timeout 300 flock 9
    if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
      timeout 300 npm ci --no-audit --no-fund >/dev/null
    fi
  )
done

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf -- "$work"
}
trap cleanup EXIT

if [[ "$mode" == client || "$mode" == client-2026 ]]; then
  # The runner starts every scenario's servers (bound to 127.0.0.1 by shim/loopback-sync.cjs) and
  # runs `node client/adapter.mjs <url>` for each, in parallel. It splits --command on spaces.
  [[ "$here" != *" "* ]] || { echo "run.sh: the client mode needs a path without spaces: $here" >&2; exit 1; }
  requirements=2025-11-25
  baseline="$here/baseline-client.yml"
  if [[ "$mode" == client-2026 ]]; then
    requirements=2026-07-28
    baseline="$here/baseline-client-2026.yml"
  fi
  mkdir -p "$work/results"
  suite_status=0
  # Own process group (setsid), so that cleanup also ends any adapter or sluice left by a scenario
  # the runner timed out; bounded by timeout.
  SLUICE_BINARY="$sluice" HOME="$work" NODE_OPTIONS="--require $here/shim/loopback-sync.cjs" \
    setsid timeout 540 node --import "$here/shim/register.mjs" \
    "$pkg/node_modules/@modelcontextprotocol/conformance/dist/index.js" client \
    --command "node $here/client/adapter.mjs" --requirements "$requirements" --timeout 60000 \
    --expected-failures "$baseline" -o "$work/results" >"$work/suite.log" 2>&1 &
  server_pid=$!
  wait "$server_pid" || suite_status=$?
  if grep -q '=== SUITE SUMMARY ===' "$work/suite.log"; then
    sed -n '/=== SUITE SUMMARY ===/,$p' "$work/suite.log"
  else
    tail -40 "$work/suite.log" >&2
  fi
  status=0
  if [[ "$mode" == client ]]; then
    echo "--- verdict (client/verdict.mjs: no failure, no warning, every expected check id) ---"
    node "$here/client/verdict.mjs" "$work/results" "$here/client/expected-checks.json" \
      "$baseline" \
      "$pkg/node_modules/@modelcontextprotocol/conformance/requirements/2025-11-25.yaml" || status=$?
  fi
  [[ $suite_status -eq 0 ]] || status=$suite_status
  if [[ $status -ne 0 ]]; then
    node "$here/failed-checks.mjs" "$work/results" >&2 || true
    # The adapter's own account of each scenario that is not baselined (sluice's log tail included).
    for f in "$work"/results/*/stderr.txt; do
      [[ -s "$f" ]] || continue
      echo "--- $(basename -- "$(dirname -- "$f")") (adapter stderr) ---" >&2
      tail -30 "$f" >&2
    done
  fi
  exit "$status"
fi

if [[ $native -eq 1 ]]; then
  printf '{"mcpServers":{"conformance":{"command":"%s","args":["--era","2026-07-28"]}}}\n' \
    "$fixture" > "$work/mcp.json"
else
  printf '{"mcpServers":{"conformance":{"command":"%s"}}}\n' "$fixture" > "$work/mcp.json"
fi
# The 2026-07-28 runs also require the tasks extension's scenarios (unscored by the runner)
# whole, but for what their baseline lists.
tasks_verdict() {
  [[ "$mode" == *-2026 ]] || return 0
  node "$here/tasks-verdict.mjs" "$1" "$2"
}

if [[ "$mode" == stdio || "$mode" == stdio-alpha ]]; then
  # The bridge in its own process group (setsid), bounded by timeout, bound to 127.0.0.1, on a
  # free loopback port below the kernel's ephemeral range (32768 and up), so that client
  # sockets of tests running beside this one cannot take it. A port taken between the check
  # and the bind (EADDRINUSE) is retried on another one (bounded).
  port=""
  for _attempt in $(seq 5); do
    candidate=""
    for _ in $(seq 20); do
      c=$((20000 + RANDOM % 12000))
      if ! (exec 3<>"/dev/tcp/127.0.0.1/$c") 2>/dev/null; then
        candidate=$c
        break
      fi
    done
    [[ -n "$candidate" ]] || { echo "run.sh: no free loopback port found" >&2; exit 1; }
    HOME="$work" NODE_OPTIONS="--require $here/shim/loopback.cjs" setsid timeout 600 \
      node node_modules/supergateway/dist/index.js \
      --stdio "$sluice serve --no-discover --config $work/mcp.json --expose all --passthrough --log-level warn" \
      --outputTransport streamableHttp --stateful --port "$candidate" >"$work/bridge.log" 2>&1 &
    server_pid=$!
    # Wait (bounded) until it listens, or has exited.
    for _ in $(seq 200); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then port=$candidate; break; fi
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.05
    done
    [[ -n "$port" ]] && break
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    if ! grep -q EADDRINUSE "$work/bridge.log"; then
      cat "$work/bridge.log" >&2
      exit 1
    fi
  done
  [[ -n "$port" ]] || { echo "run.sh: the bridge found no free port" >&2; cat "$work/bridge.log" >&2; exit 1; }

  stdio_args=()
  stdio_baseline="$here/baseline-stdio.yml"
  if [[ "$mode" == stdio-alpha ]]; then
    stdio_args=(--requirements 2025-11-25)
    stdio_baseline="$here/baseline-stdio-alpha.yml"
  fi
  # One suite run against the bridge, its results in $work/results-$1. A failure prints every
  # failed or warned check with its details, and what the bridge and sluice wrote.
  run_suite() {
    local status=0
    mkdir -p "$work/results-$1"
    timeout 300 node --import "$here/shim/register.mjs" \
      "$pkg/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
      --url "http://127.0.0.1:$port/mcp" "${stdio_args[@]}" --expected-failures "$stdio_baseline" \
      -o "$work/results-$1" >"$work/suite.log" 2>&1 || status=$?
    sed -n '/=== SUMMARY ===/,$p' "$work/suite.log"
    if [[ $status -ne 0 ]]; then
      grep -E "✗|FAILURE|Error" "$work/suite.log" | head -40 >&2 || true
      node "$here/failed-checks.mjs" "$work/results-$1" >&2 || true
      echo "--- bridge and sluice log (tail) ---" >&2
      tail -60 "$work/bridge.log" >&2
    fi
    return "$status"
  }
  # The bridge is a third party between the suite and sluice (it spawns a sluice per session and
  # relays every message), so a failed run is printed in full and then run once more: a check
  # that fails twice fails the test; one that failed once is on record above.
  status=0
  run_suite 1 || status=$?
  if [[ $status -ne 0 ]]; then
    echo "run.sh: the run through the bridge failed (details above); running it once more" >&2
    status=0
    run_suite 2 || status=$?
  fi
  exit "$status"
fi

if [[ "$mode" == stdio-2026 ]]; then
  # The stateless bridge (stdio-bridge-2026.mjs) runs one sluice on stdio; it writes its port
  # (a free loopback one) once it listens. Own process group (setsid), bounded by timeout.
  HOME="$work" setsid timeout 600 node "$here/stdio-bridge-2026.mjs" "$work/port" \
    "$sluice" serve --no-discover --state-dir "$work/state" --config "$work/mcp.json" \
    --expose all --passthrough --log-level warn >"$work/bridge.log" 2>&1 &
  server_pid=$!
  port=""
  for _ in $(seq 600); do
    if [[ -s "$work/port" ]]; then port="$(tr -d '[:space:]' < "$work/port")"; break; fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.05
  done
  [[ -n "$port" ]] || { echo "run.sh: the bridge did not listen" >&2; cat "$work/bridge.log" >&2; exit 1; }
  status=0
  HOME="$work" NODE_OPTIONS="--require $here/shim/loopback.cjs" timeout 300 \
    node --import "$here/shim/register.mjs" \
    "$pkg/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
    --url "http://127.0.0.1:$port/mcp" --requirements 2026-07-28 \
    --expected-failures "$here/baseline-stdio-2026$suffix.yml" -o "$work/results" \
    >"$work/suite.log" 2>&1 || status=$?
  sed -n '/=== SUMMARY ===/,$p' "$work/suite.log"
  tasks_verdict "$work/results" "$here/baseline-stdio-2026$suffix.yml" || status=1
  if [[ $status -ne 0 ]]; then
    node "$here/failed-checks.mjs" "$work/results" >&2 || true
    echo "--- bridge and sluice log (tail) ---" >&2
    tail -40 "$work/bridge.log" >&2
  fi
  exit "$status"
fi

# HTTP modes: sluice's own HTTP front end on a free loopback port (--port 0), which it writes to
# --port-file once it listens. Own process group (setsid), bounded by timeout.
mkdir -p "$work/state" "$work/results"
HOME="$work" setsid timeout 600 "$sluice" serve --transport http --host 127.0.0.1 --port 0 \
  --port-file "$work/port" --state-dir "$work/state" --no-discover --config "$work/mcp.json" \
  --expose all --passthrough --log-level warn >"$work/sluice.log" 2>&1 &
server_pid=$!

# Wait (bounded, 30 s) for the port file.
port=""
for _ in $(seq 600); do
  if [[ -s "$work/port" ]]; then
    port="$(tr -d '[:space:]' < "$work/port")"
    [[ "$port" =~ ^[0-9]+$ ]] && break
    port=""
  fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "run.sh: sluice exited before listening:" >&2
    cat "$work/sluice.log" >&2
    exit 1
  fi
  sleep 0.05
done
[[ -n "$port" ]] || { echo "run.sh: sluice wrote no port file within 30 s" >&2; cat "$work/sluice.log" >&2; exit 1; }

if [[ "$mode" == http ]]; then
  baseline="$here/baseline-http.yml"
  suite_args=()
elif [[ "$mode" == http-2026 ]]; then
  baseline="$here/baseline-http-2026$suffix.yml"
  suite_args=(--requirements 2026-07-28)
else
  baseline="$here/baseline-http-alpha.yml"
  suite_args=(--requirements 2025-11-25)
fi

status=0
HOME="$work" NODE_OPTIONS="--require $here/shim/loopback.cjs" timeout 300 \
  node --import "$here/shim/register.mjs" \
  "$pkg/node_modules/@modelcontextprotocol/conformance/dist/index.js" server \
  --url "http://127.0.0.1:$port/mcp" "${suite_args[@]}" --expected-failures "$baseline" \
  -o "$work/results" >"$work/suite.log" 2>&1 || status=$?
if grep -q '=== SUMMARY ===' "$work/suite.log"; then
  sed -n '/=== SUMMARY ===/,$p' "$work/suite.log"
else
  tail -40 "$work/suite.log" >&2
fi

tasks_verdict "$work/results" "$baseline" || status=1
if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "run.sh: sluice exited during the run:" >&2
  tail -40 "$work/sluice.log" >&2
  status=1
fi
if [[ $status -ne 0 ]]; then
  # Every check that failed or warned (warnings count against a baseline too), with its details.
  node "$here/failed-checks.mjs" "$work/results" >&2 || true
  if [[ -s "$work/sluice.log" ]]; then
    echo "--- sluice log (tail) ---" >&2
    tail -40 "$work/sluice.log" >&2
  fi
fi
exit "$status"
