#!/usr/bin/env bash
# bash bench/baseline.sh SOURCE DEST (run.sh calls it for --baseline=SOURCE): puts a second build
# of the library at DEST/node_modules/nest-pg-job-queue, where `ours@base` resolves its own copy
# while the packages it requires (@nestjs/*, typeorm, pg) resolve, from there, to bench/ and the
# root's node_modules as today's build does. Prints one line saying what the baseline is.
# SOURCE, tried in this order:
#   a file         a tarball of `npm pack`, unpacked as it is;
#   a folder       a built package (dist/ present), packed with --ignore-scripts so its `files`
#                  list applies and its prepack does not rebuild it;
#   a commit/ref   exported with `git archive` (read-only on the repository: no worktree, no
#                  checkout, nothing tracked written) into DEST/src, built and packed the way
#                  run.sh packs today's (prepack), with the root's node_modules linked in.
set -euo pipefail
source=$1
dest=$2
root=$(cd "$(dirname "$0")/.." && pwd)
package="$dest/node_modules/nest-pg-job-queue"
rm -rf "$dest" && mkdir -p "$package"
# The export is removed whatever happens: a source tree left under bench/ would be linted.
trap 'rm -rf "$dest/src"' EXIT
# Absolute, so that npm takes a folder for a folder, not for a package name of the registry.
if [ -e "$source" ]; then source="$(cd "$(dirname "$source")" && pwd)/$(basename "$source")"; fi

if [ -f "$source" ]; then
  tarball=$source
  label="tarball $tarball"
elif [ -d "$source" ]; then
  if [ ! -f "$source/package.json" ] || [ ! -f "$source/dist/index.js" ]; then
    echo "--baseline=$source: a folder must hold a built package (package.json and dist/index.js)" >&2
    exit 1
  fi
  tarball="$dest/$(npm pack "$source" --ignore-scripts --pack-destination "$dest" --silent | tail -n 1)"
  label="folder $source"
else
  if ! commit=$(git -C "$root" rev-parse --verify --quiet "$source^{commit}"); then
    echo "--baseline=$source: not a file, a folder, nor a commit of this repository" >&2
    exit 1
  fi
  mkdir -p "$dest/src"
  git -C "$root" archive --format=tar "$commit" | tar -x -C "$dest/src"
  ln -s "$root/node_modules" "$dest/src/node_modules"
  tarball="$dest/$(cd "$dest/src" && npm pack ./libs/job-queue --pack-destination "$dest" --silent | tail -n 1)"
  label="commit $(git -C "$root" log -1 --format='%h %s' "$commit")"
fi

tar -xzf "$tarball" -C "$package" --strip-components=1
if [ "$(node -p "require('$package/package.json').name")" != nest-pg-job-queue ]; then
  echo "--baseline=$source: the package is not nest-pg-job-queue" >&2
  exit 1
fi
echo "$label"
