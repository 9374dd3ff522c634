#!/usr/bin/env bash
# Runs each libFuzzer target of a fuzz build directory (see docs/fuzzing.md) for a bounded
# time, over a copy of its committed seed corpus (tests/fuzz/corpus/<name>/ is never
# written), with its dictionary when there is one, FUZZ_JOBS targets at a time (2). Fails when
# a target finds a crash, a leak, UB, a timeout or an out-of-memory; the input is kept in the
# work directory and its path printed. Prints the executions of each target.
#   scripts/fuzz.sh BUILD_DIR [SECONDS_PER_TARGET] [TARGET...]
set -euo pipefail

build=${1:?usage: scripts/fuzz.sh BUILD_DIR [SECONDS] [TARGET...]}
seconds=${2:-30}
shift $(($# < 2 ? $# : 2))
source_dir=$(cd "$(dirname "$0")/.." && pwd)
fuzz_dir=$source_dir/tests/fuzz
targets=("$@")
if ((${#targets[@]} == 0)); then
  for src in "$fuzz_dir"/*_fuzz.cpp; do
    name=$(basename "$src" _fuzz.cpp)
    targets+=("$name")
  done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sluice-fuzz.XXXXXX")
# Targets run FUZZ_JOBS at a time (default 2, the cores CI has): each is single-threaded.
jobs_max=${FUZZ_JOBS:-2}

# One target over a copy of its corpus; its outcome in $work/<name>/status.
run_one() {
  local name=$1 binary=$build/tests/fuzz/fuzz_$1
  mkdir -p "$work/$name/corpus" "$work/$name/artifacts"
  cp -r "$fuzz_dir/corpus/$name/." "$work/$name/corpus/"
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
              -artifact_prefix="$work/$name/artifacts/")
  [[ -f $fuzz_dir/$name.dict ]] && args+=(-dict="$fuzz_dir/$name.dict")
  echo "fuzz.sh: $name for ${seconds}s" >&2
  if "$binary" "${args[@]}" "$work/$name/corpus" >"$work/$name/log" 2>&1; then
    echo ok >"$work/$name/status"
  else
    echo failed >"$work/$name/status"
  fi
}

for name in "${targets[@]}"; do
  [[ -x $build/tests/fuzz/fuzz_$name ]] || { echo "fuzz.sh: $build/tests/fuzz/fuzz_$name is not built" >&2; exit 2; }
done
for name in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
  run_one "$name" &
done
wait

summary=()
for name in "${targets[@]}"; do
  if [[ $(cat "$work/$name/status" 2>/dev/null) != ok ]]; then
    tail -n 60 "$work/$name/log" >&2
    echo "fuzz.sh: $name FAILED; the input is in $work/$name/artifacts/" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name/log")
  summary+=("$name: ${runs:-?} executions in ${seconds}s")
done
printf 'fuzz.sh: %s\n' "${summary[@]}"
rm -rf "$work"
