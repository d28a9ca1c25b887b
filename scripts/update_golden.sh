#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Rewrite the golden outputs (tests/golden/cases) with the current build's gpushim, then show
# what changed: review it before committing. Usage: scripts/update_golden.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
G=${1:-build}/analyzer/gpushim
while IFS=$'\t' read -r name args; do
	case $name in
	""|\#*) continue ;;
	esac
	set +e
	# shellcheck disable=SC2086 # the arguments are words
	"$G" $args >"tests/golden/$name" 2>&1
	echo "exit $?" >>"tests/golden/$name"
	set -e
done <tests/golden/cases
git --no-pager diff --stat -- tests/golden
