#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `meson install --destdir` of this build: exactly the files a package carries (the binary,
# the library, the format header and gpushim.pc, a man page per command, bash and zsh
# completion, the JSON Schemas, LICENSE and CHANGELOG.md), and they work from there: the
# installed gpushim prints the project's version and runs a program under the installed
# library, found beside it, and a reader compiles against the header through pkg-config.
. "$(dirname "$0")/lib.sh"
dest=$WORK/dest
${MESON:-meson} install -C "$BUILD_ROOT" --destdir "$dest" --no-rebuild --quiet ||
	fail "meson install: exit $?"

dir() {
	meson introspect "$BUILD_ROOT" --buildoptions | jq -r ".[] | select(.name == \"$1\") | .value"
}
prefix=$(dir prefix)
bin=$prefix/$(dir bindir)
lib=$prefix/$(dir libdir)
inc=$prefix/$(dir includedir)
man1=$prefix/$(dir mandir)/man1
share=$prefix/$(dir datadir)
version=$(meson introspect "$BUILD_ROOT" --projectinfo | jq -r .version)
commands=$("$GPUSHIM_BIN" --help-commands | cut -f1)

{
	echo "$bin/gpushim"
	echo "$lib/libgpushim.so"
	echo "$lib/pkgconfig/gpushim.pc"
	echo "$inc/gpushim/trace_format.h"
	echo "$man1/gpushim.1"
	for c in $commands; do
		echo "$man1/gpushim-$c.1"
	done
	echo "$share/bash-completion/completions/gpushim"
	echo "$share/zsh/site-functions/_gpushim"
	echo "$share/gpushim/schema/report.schema.json"
	echo "$share/gpushim/schema/diff.schema.json"
	echo "$share/doc/gpushim/LICENSE"
	echo "$share/doc/gpushim/CHANGELOG.md"
} | sort >"$WORK/want"
(cd "$dest" && find . -type f -o -type l | sed 's/^\.//' | sort) >"$WORK/got"
diff -u "$WORK/want" "$WORK/got" >"$WORK/diff" || fail "installed files (- missing, + extra):
$(cat "$WORK/diff")"

expect "installed --version" "$("$dest$bin/gpushim" --version | cut -d' ' -f1-2)" "gpushim $version"
cmp -s "$SOURCE_ROOT/LICENSE" "$dest$share/doc/gpushim/LICENSE" || fail "LICENSE differs"
grep -q "^## $version " "$dest$share/doc/gpushim/CHANGELOG.md" ||
	fail "CHANGELOG.md has no section for $version"

# The installed gpushim finds the installed library beside it (../lib/...), as a user's would.
"$dest$bin/gpushim" run -o "$WORK/run.trace" -- "$FAKE_CLIENT" direct >"$WORK/run.out" ||
	fail "installed gpushim run: exit $?"
"$dest$bin/gpushim" report --format json "$WORK/run.trace" >"$WORK/run.json"
[ "$(jget "$WORK/run.json" .counts.launches)" -gt 0 ] ||
	fail "installed gpushim run: no launch recorded"

# A trace reader: the header through pkg-config, the schemas where gpushim.pc says.
pc() {
	PKG_CONFIG_PATH=$dest$lib/pkgconfig pkg-config --define-variable=prefix="$dest$prefix" "$@" gpushim
}
expect "pkg-config --modversion" "$(pc --modversion)" "$version"
[ -f "$(pc --variable=schemadir)/report.schema.json" ] ||
	fail "schemadir $(pc --variable=schemadir) holds no report.schema.json"
cat >"$WORK/reader.c" <<'EOF'
#include <stdio.h>
#include <gpushim/trace_format.h>

int main(void)
{
	printf("%d.%d %s %zu\n", TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR, TRACE_MAGIC,
	       sizeof(struct trace_file_header));
	return 0;
}
EOF
# shellcheck disable=SC2046 # pkg-config's flags are words
${CC:-cc} -std=c11 -Wall -Werror $(pc --cflags) -o "$WORK/reader" "$WORK/reader.c" ||
	fail "a reader does not compile against the installed header"
format=$("$GPUSHIM_BIN" --version | sed 's/.*trace format \([0-9.]*\)).*/\1/')
expect "the installed header's version" "$("$WORK/reader" | cut -d' ' -f1-2)" "$format GPUSHIM"
echo "install: $(wc -l <"$WORK/got") files under $prefix, gpushim $version, format $format"
