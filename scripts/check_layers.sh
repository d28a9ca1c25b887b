#!/bin/bash
# SPDX-License-Identifier: MIT
#
# check_layers.sh - the analyzer is a strict stack of folders, each including only the folders
# below it (README, Layout):
#
#   main.c -> cmd/ -> output/ -> analysis/ -> model/ -> trace/ -> util/
#
# A header of another folder is included by its folder ("model/model.h"), one of the same
# folder by its name; include/gpushim/ ("gpushim/...") and the build's config.h and uthash.h
# anyone may include. Prints each include that points up the stack or sideways, and exits 1
# when there is one (meson test 'layers').
#
#   scripts/check_layers.sh [ANALYZER_DIR]
set -u

dir=${1:-$(cd "$(dirname "$0")/../analyzer" && pwd)}
layers=(cmd output analysis model trace util)
bad=0

# below LAYER: the folders LAYER may include ("" for main.c: all of them).
below() {
	local i found=0
	[ -z "$1" ] && { echo "${layers[*]}"; return; }
	for i in "${layers[@]}"; do
		[ $found = 1 ] && echo "$i"
		[ "$i" = "$1" ] && found=1
	done
}

check_file() {	# check_file FILE LAYER
	local f=$1 layer=$2 inc folder allowed
	allowed=" $(below "$layer" | tr '\n' ' ') "
	while read -r inc; do
		case $inc in
		gpushim/*|config.h|uthash.h) continue ;;
		*/*)
			folder=${inc%%/*}
			if [ "$folder" = "$layer" ] || [[ "$allowed" != *" $folder "* ]]; then
				echo "check_layers: ${f#"$dir"/}: #include \"$inc\": ${layer:-main.c} may include only: $(below "$layer" | tr '\n' ' ')"
				bad=$((bad + 1))
			fi
			;;
		*)
			if [ ! -e "$(dirname "$f")/$inc" ]; then
				echo "check_layers: ${f#"$dir"/}: #include \"$inc\": not in its folder (name the folder: \"folder/$inc\")"
				bad=$((bad + 1))
			fi
			;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
}

for f in "$dir"/*.c "$dir"/*.h; do
	[ -e "$f" ] && check_file "$f" ""
done
for layer in "${layers[@]}"; do
	[ -d "$dir/$layer" ] || { echo "check_layers: no folder $layer/ in $dir"; bad=$((bad + 1)); continue; }
	for f in "$dir/$layer"/*.c "$dir/$layer"/*.h; do
		[ -e "$f" ] && check_file "$f" "$layer"
	done
done
# A folder nobody placed in the stack would escape the check.
for d in "$dir"/*/; do
	d=$(basename "$d")
	[[ " ${layers[*]} " == *" $d "* ]] || { echo "check_layers: folder $d/ is not in the stack"; bad=$((bad + 1)); }
done
[ $bad -eq 0 ] || exit 1
echo "check_layers: every include points down the stack"
