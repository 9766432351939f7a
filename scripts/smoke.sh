#!/usr/bin/env bash
# npm run smoke: the README's first command, as a newcomer runs it, in this checkout. With
# DATABASE_URL unset and no data yet, `npm start` serves the example app on an embedded PostgreSQL;
# the curl line it prints works as printed (the admin token in it, 401 without it); a job posted
# with curl completes; Ctrl-C exits 0 within STOP_DEADLINE_S and leaves no postgres behind; a
# second `npm start` still has the job, with its result. The run itself is scripts/lib/newcomer-run.sh
# (shared with scripts/root-first-run.sh). Uses a throwaway data dir and free ports, so it never
# touches ./.data or a running app.
# Prints PASS/FAIL lines; exits non-zero on the first failure, leaving no process behind.
set -euo pipefail
cd "$(dirname "$0")/.."

NEWCOMER_NAME=smoke
BOOT_DEADLINE_S=${SMOKE_BOOT_DEADLINE_S:-180} # nest build + initdb on a cold machine
STOP_DEADLINE_S=10
# shellcheck source=lib/newcomer-run.sh
. scripts/lib/newcomer-run.sh

newcomer_init job-queue-smoke-XXXXXX
chmod 755 "$work" # as root the server runs as its own account, which must reach its data dir
NEWCOMER_DATA_DIR="$work/pg"
project_dir=$PWD
newcomer_run
