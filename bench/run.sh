#!/usr/bin/env bash
# npm run bench [-- --quick | --only=ours,latency | --list]: packs the library the way users
# get it (npm pack), installs the bench's own peers (bench/package.json; never the root's) and
# the tarball under its name, then runs bench/main.js.
# --baseline=<commit|folder|.tgz>: a second package, from bench/baseline.sh, run as `ours@base`
# beside today's build; main.js is given the folder it was unpacked to.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/bench"
# A relative --baseline path is the caller's (npm run starts scripts in the root; INIT_CWD is
# where npm was run).
caller=${INIT_CWD:-$PWD}
cd "$root"
rm -rf "$here/build" && mkdir -p "$here/build"
tarball=$(npm pack ./libs/job-queue --pack-destination "$here/build" --silent | tail -n 1)
if [ ! -f "$here/node_modules/.package-lock.json" ] || [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
  npm --prefix "$here" ci --no-audit --no-fund --loglevel=error
fi
# Unpacked in place rather than `npm install`ed, so the bench's lock file stays as committed.
rm -rf "$here/node_modules/nest-pg-job-queue" && mkdir -p "$here/node_modules/nest-pg-job-queue"
tar -xzf "$here/build/$tarball" -C "$here/node_modules/nest-pg-job-queue" --strip-components=1
args=()
for arg in "$@"; do
  if [[ $arg == --baseline=* ]]; then
    BENCH_BASELINE_SOURCE=$(cd "$caller" && bash "$here/baseline.sh" "${arg#--baseline=}" "$here/build/base")
    export BENCH_BASELINE_SOURCE
    arg="--baseline=$here/build/base/node_modules/nest-pg-job-queue"
  fi
  args+=("$arg")
done
exec node "$here/main.js" "${args[@]}"
