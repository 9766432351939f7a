#!/usr/bin/env bash
# npm run bench [-- --quick | --only=ours,latency | --list]: builds the library the way users
# get it (nest build job-queue), copies it to bench/build, installs the bench's own peers
# (bench/package.json; never the root's), then runs bench/main.js.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/bench"
cd "$root"
npx nest build job-queue >/dev/null
rm -rf "$here/build" && mkdir -p "$here/build"
cp -r dist/libs/job-queue/. "$here/build/"
if [ ! -f "$here/node_modules/.package-lock.json" ] || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
  npm --prefix "$here" ci --no-audit --no-fund --loglevel=error
fi
exec node "$here/main.js" "$@"
