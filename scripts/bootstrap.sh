#!/usr/bin/env bash
# Installs what sluice needs to build and test on Debian 12, only when something is missing.
# Called by `make`; safe to run again. Needs root (or sudo) the first time.
set -euo pipefail

packages=(build-essential cmake pkg-config ccache
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev libssl-dev libsqlite3-dev
  libyaml-cpp-dev libre2-dev libcli11-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libstemmer-dev wordnet-dev wordnet-base
  libtomlplusplus-dev help2man)
# --with-node: what the tests need beyond the build. Debian's json-schema-test-suite carries the
# JSON-Schema-Test-Suite's draft7 cases for tests/unit/schema/schema_suite_test.cpp.
if [[ "${1:-}" == "--with-node" ]]; then
  # systemd and man-db: the package test (systemd-analyze verify of the unit, man -l).
  packages+=(json-schema-test-suite systemd man-db)
  if ! command -v node >/dev/null 2>&1; then packages+=(nodejs npm); fi
fi
# --with-fuzz: clang-15 for the fuzz targets of tests/fuzz (`make test-fuzz`); libFuzzer and
# the sanitizer runtimes come with it (libclang-common-15-dev).
if [[ "${1:-}" == "--with-fuzz" ]]; then
  packages+=(clang-15)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}" >&2
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
