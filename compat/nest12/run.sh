#!/usr/bin/env bash
# npm run compat:nest12: build the library with NestJS 11, then boot it inside NestJS 12.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here="$root/compat/nest12"
cd "$root"
npx nest build job-queue >/dev/null
rm -rf "$here/build" && mkdir -p "$here/build"
cp -r dist/libs/job-queue/. "$here/build/"
npm --prefix "$here" ci --no-audit --no-fund --loglevel=error
node "$here/smoke.cjs"
