#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install what is missing, build, and run the whole test suite (unit, end-to-end with the fake
# driver, golden; the GPU suite skips itself where there is no GPU). Extra arguments go to
# `meson test` (e.g. --suite unit).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/deps.sh
deps_install
BUILD=${BUILD_DIR:-build}
deps_build "$BUILD" -Dwerror_ci=true
meson test -C "$BUILD" --print-errorlogs "$@"
