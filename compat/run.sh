#!/usr/bin/env bash
# npm run compat [-- APP...]: proves the packed nest-pg-job-queue works as users get it. It packs
# ./libs/job-queue (prepack compiles it), prints the tarball's summary, then runs compat/app.sh for
# each scratch app, in a temporary folder outside the repo:
#   nest11-cjs       NestJS 11, @nestjs/schedule 6, @nestjs/typeorm 11, CommonJS, TypeScript 5.9,
#                    with the optional peers (@nestjs/terminus 11, prom-client, @opentelemetry/api,
#                    nestjs-cls with @nestjs-cls/transactional and its TypeORM adapter,
#                    class-transformer and class-validator for dto)
#                    and @nestjs/platform-express 11, which serves the dashboard
#   nest12-esm       NestJS 12, @nestjs/schedule 12, @nestjs/typeorm 12, "type": "module", TypeScript
#                    6, with the optional peers (@nestjs/terminus 12, the nestjs-cls ones, the dto
#                    ones) and
#                    @nestjs/platform-express 12
#   nest11-cjs-bare  nest11-cjs without any optional peer: the README's blocks of the health,
#                    metrics and traces entry points left out, and each entry point must say
#                    which package to install
# Each: `npm ci` from its committed lock, the tarball installed on top, the README's ```ts file
# blocks as its src/ (ESM: relative imports get `.js`) plus compat/main.ts, compiled by tsc (strict,
# nodenext) against the tarball's .d.ts and run with plain node against a fresh database on
# DATABASE_URL: a job enqueued through the README's ReportsService must complete. One PASS line per
# app; any failing app makes the exit status non-zero (the others still run). The apps run in
# parallel; each one's log prints when it is done.
# Installs reuse the npm cache (~/.npm, or npm_config_cache): cache that folder in CI.
# COMPAT_README (default libs/job-queue/README.md) takes the blocks from another file, e.g. to try a
# fix of the docs; the tarball always holds the package's own README.
# npm warns EBADENGINE for file-type@22 in nest12-esm: every @nestjs/common 12 pins a file-type that
# declares node >=22 (used only by its FileTypeValidator); the rest of the tree declares Node 20.19.
set -euo pipefail

if [[ -z "${DATABASE_URL:-}" ]]; then
  echo "compat: DATABASE_URL is not set. Point it at a PostgreSQL server where a scratch database" >&2
  echo "may be created and dropped, e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres" >&2
  exit 2
fi

root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/compat"
readme=$(realpath "${COMPAT_README:-$root/libs/job-queue/README.md}")
all_apps=(nest11-cjs nest12-esm nest11-cjs-bare)
apps=("$@")
[[ ${#apps[@]} -gt 0 ]] || apps=("${all_apps[@]}")
for app in "${apps[@]}"; do
  [[ -f "$here/$app/package-lock.json" ]] || { echo "compat: no app $app (have: ${all_apps[*]})" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/jq-compat.XXXXXX")
pids=()
cleanup() {
  # An interrupted run stops its apps (each leads a process group of its own) before the folder goes.
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
started=$SECONDS

# The tarball, as `npm publish` would upload it. --json lists what --dry-run would.
cd "$root"
if ! npm pack ./libs/job-queue --pack-destination "$tmp" --json >"$tmp/pack.json" 2>"$tmp/pack.log"; then
  cat "$tmp/pack.json" "$tmp/pack.log" >&2 # the build's own output lands in both
  echo "FAIL compat: npm pack ./libs/job-queue" >&2
  exit 1
fi
node -e '
  const [p] = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const kb = (n) => (n / 1024).toFixed(1) + " kB";
  const count = (re) => p.files.filter((f) => re.test(f.path)).length;
  const other = p.files.filter((f) => !/\.(js|js\.map|d\.ts)$/.test(f.path)).map((f) => f.path);
  console.log(`compat pack: ${p.filename}: ${p.entryCount} files, ${kb(p.size)} packed, ${kb(p.unpackedSize)} unpacked`);
  console.log(`compat pack:   ${count(/\.js$/)} .js, ${count(/\.d\.ts$/)} .d.ts, ${count(/\.js\.map$/)} .js.map, ${other.join(", ")}`);
' "$tmp/pack.json"
tarball="$tmp/$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))[0].filename' "$tmp/pack.json")"
[[ -f "$tarball" ]] || { echo "FAIL compat: npm pack wrote no $tarball" >&2; exit 1; }

# The apps run side by side (each in its own folder and database); their logs print in order.
group=()
command -v setsid >/dev/null && group=(setsid)
for app in "${apps[@]}"; do
  "${group[@]}" bash "$here/app.sh" "$app" "$tarball" "$tmp/$app" "$readme" >"$tmp/$app.log" 2>&1 &
  pids+=($!)
done
failed=()
for i in "${!apps[@]}"; do
  status=0
  wait "${pids[$i]}" || status=$?
  cat "$tmp/${apps[$i]}.log"
  [[ $status == 0 ]] || failed+=("${apps[$i]}")
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAIL compat: ${failed[*]} ($((SECONDS - started)) s)" >&2
  exit 1
fi
echo "compat: ${apps[*]} passed in $((SECONDS - started)) s"
