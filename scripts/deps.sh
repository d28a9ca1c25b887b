# SPDX-License-Identifier: MIT
# Sourced by test.sh and demo.sh: install the Debian packages the build and tests need, if any
# is missing, and check for the CUDA toolkit headers (present on every development and CI
# machine; the shim never links against the driver).
deps_install() {
	local need=()
	command -v meson >/dev/null || need+=(meson)
	command -v ninja >/dev/null || need+=(ninja-build)
	command -v pkg-config >/dev/null || need+=(pkg-config)
	command -v cc >/dev/null || need+=(gcc)
	command -v jq >/dev/null || need+=(jq)
	command -v readelf >/dev/null || need+=(binutils)
	[ -f /usr/include/zstd.h ] || need+=(libzstd-dev)
	[ -f /usr/include/uthash.h ] || need+=(uthash-dev)
	# export --format sqlite (the build goes on without it: the format then says so).
	[ -f /usr/include/sqlite3.h ] || need+=(libsqlite3-dev)
	# The tests of what is installed: man pages rendered, JSON Schemas validated.
	command -v groff >/dev/null || need+=(groff-base)
	python3 -c 'import jsonschema' 2>/dev/null || need+=(python3-jsonschema)
	# The HTML report opened in a real browser (tests/e2e/html_browser.py), headless.
	command -v chromium >/dev/null || command -v chromium-browser >/dev/null || need+=(chromium)
	if [ ${#need[@]} -gt 0 ]; then
		local sudo=
		[ "$(id -u)" = 0 ] || sudo=sudo
		echo "installing: ${need[*]}" >&2
		$sudo apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >&2
	fi
	CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
	if [ ! -f "$CUDA_HOME/include/cuda.h" ]; then
		echo "CUDA toolkit headers not found under $CUDA_HOME (set CUDA_HOME)" >&2
		return 1
	fi
}

# deps_install_fuzz: clang and its libFuzzer runtime (Debian's clang and libclang-rt-N-dev).
deps_install_fuzz() {
	local sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	if ! command -v clang >/dev/null; then
		echo "installing: clang" >&2
		$sudo apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang >&2
	fi
	if [ ! -f "$(clang -print-runtime-dir)/libclang_rt.fuzzer-x86_64.a" ]; then
		local v
		v=$(clang -dumpversion | cut -d. -f1)
		echo "installing: libclang-rt-$v-dev" >&2
		$sudo apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "libclang-rt-$v-dev" >&2
	fi
}

# deps_build DIR: configure (once) and build.
deps_build() {
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" -Dcudatoolkit="$CUDA_HOME" "$@" >&2
	fi
	ninja -C "$dir" >&2
}
