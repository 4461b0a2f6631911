#!/bin/sh
# build.sh BUILD "PATCH ..." MAKE [ARG ...]: builds a reverted-defect control
# (docs/CONTROLS.md). Copies the working tree (every file git knows or would
# add, as it is on disk: uncommitted edits included) to
# build/controls/<name of BUILD>/, applies each PATCH there and runs
# MAKE ARG ... BUILD=<BUILD, absolute> in the copy. Called by
# `make control` (tests/controls/controls.mk) from the top directory.
set -e
build=$1
patches=$2
shift 2
name=$(basename "$build")
copy=build/controls/$name
mkdir -p "$build"
out=$(cd "$build" && pwd)
rm -rf "$copy"
mkdir -p "$copy"
# Tracked and untracked-but-not-ignored files that exist (a deleted file is
# gone from the copy too); cp -p keeps their times, so an unchanged file does
# not rebuild.
git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	xargs -0 cp -p --parents -t "$copy"
for p in $patches; do
	if ! patch -p1 -d "$copy" --forward --batch --silent -F0 \
	    --no-backup-if-mismatch -r - < "$p"; then
		echo "error: $p no longer applies to the tree: the code it" \
		    "reverts has changed; remake the patch (docs/CONTROLS.md)" >&2
		exit 1
	fi
	echo "  PATCH   $p -> $copy"
done
cd "$copy"
exec "$@" BUILD="$out"
