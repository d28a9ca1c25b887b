#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The man pages and shell completion doc/cli_docs.py made at build time (DOC_DIR), against
# the code they come from: main.c's command table and each cmd_*.c's getopt_long table. Every
# command has its page and is completed, every long option is in its page and is completed for
# its command (bash: by running the completion; zsh: in the command's function), values and the
# program after `run --` are completed, and each page renders without a warning (man -l where
# man is installed, and groff).
. "$(dirname "$0")/lib.sh"
cd "$SOURCE_ROOT"

table=$(sed -n 's/^[[:space:]]*{ "\([a-z]*\)", cmd_.*/\1/p' analyzer/main.c)
[ -n "$table" ] || fail "no command in analyzer/main.c's table"
expect "--help-commands" "$("$GPUSHIM_BIN" --help-commands | cut -f1 | tr '\n' ' ')" \
	"$(echo $table) "

# complete WORD...: what bash completes after "gpushim WORD..." (the last word, being typed).
complete_bash() (
	# shellcheck disable=SC1091 # generated
	. "$DOC_DIR/gpushim"
	COMP_WORDS=(gpushim "$@")
	COMP_CWORD=$#
	_gpushim
	printf '%s\n' "${COMPREPLY[@]}"
)

# has LIST WORD: WORD is a line of LIST.
has() {
	printf '%s\n' "$1" | grep -qxF -- "$2"
}

zsh_file=$DOC_DIR/_gpushim
top=$(complete_bash '')
for c in $table; do
	page=$DOC_DIR/gpushim-$c.1
	[ -f "$page" ] || fail "no man page gpushim-$c.1"
	has "$top" "$c" || fail "bash completes no command $c"
	grep -q "^		'$c:" "$zsh_file" || fail "zsh completes no command $c"
	opts=$(sed -n '/struct option opts\[\]/,/};/s/.*{ "\([a-z0-9-]*\)",.*/\1/p' \
		"analyzer/cmd/cmd_$c.c")
	[ -n "$opts" ] || fail "no getopt_long table in analyzer/cmd/cmd_$c.c"
	bash_opts=$(complete_bash "$c" --)
	zsh_fn=$(sed -n "/^_gpushim_$c() {/,/^}/p" "$zsh_file")
	for o in $opts; do
		has "$bash_opts" "--$o" || fail "bash: gpushim $c --$o not completed"
		printf '%s\n' "$zsh_fn" | grep -qE -- "[')]--$o[]=['+-]" ||
			fail "zsh: gpushim $c --$o not completed"
		# --help needs no page: the page is its text.
		[ "$o" = help ] || grep -qF -- "$(printf '%s' "--$o" | sed 's/-/\\-/g')" "$page" ||
			fail "gpushim-$c.1 does not name --$o"
	done
done
has "$top" --version && has "$top" --help || fail "bash: global options not completed: $top"
grep -q "'(- \*)--version" "$zsh_file" || fail "zsh: --version not completed"
expect "bash: report --format" "$(complete_bash report --format '' | tr '\n' ' ')" "text json html "
# whatif's option line says FMT, its usage text|json: the choices win.
expect "bash: whatif -f" "$(complete_bash whatif -f '' | tr '\n' ' ')" "text json "
expect "bash: dump --format j" "$(complete_bash dump --format j)" "jsonl"
has "$(complete_bash run -o x.trace -- ba)" bash || fail "bash: no program after run --"
[ -z "$(complete_bash run --mode '')" ] || fail "bash: run --mode completed with files"
if command -v zsh >/dev/null; then
	zsh -n "$zsh_file" || fail "zsh: _gpushim does not parse"
fi

# Rendering: each page without a warning, by man where it is installed, always by groff.
for page in "$DOC_DIR"/gpushim.1 "$DOC_DIR"/gpushim-*.1; do
	if command -v man >/dev/null; then
		MANWIDTH=80 man --warnings -l "$page" >"$WORK/out" 2>"$WORK/err" ||
			fail "man -l $page: exit $?"
		[ ! -s "$WORK/err" ] || fail "man -l $page: $(cat "$WORK/err")"
		grep -q "^NAME" "$WORK/out" || fail "man -l $page: no NAME section"
	fi
	groff -man -Tutf8 -ww -z "$page" 2>"$WORK/err" || fail "groff $page: exit $?"
	[ ! -s "$WORK/err" ] || fail "groff $page: $(cat "$WORK/err")"
done
echo "man_completion: $(echo $table | wc -w) commands, their pages and completions"
