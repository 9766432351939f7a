#!/usr/bin/env bash
# The README's first command as root in a private folder: a fresh clone of this repo's HEAD in a
# `mktemp -d` folder (mode 0700, like /root), `npm ci`, then `npm start` with DATABASE_URL and
# EMBEDDED_PG_DATA_DIR unset. The embedded server runs as an account of its own (nest-pg-job-queue), which cannot enter
# that folder: its data (and a copy of the binaries) must land where it can
# (/var/lib/nest-pg-job-queue/<project>-<hash>), as the app's "data in …" line says.
# Then the same run as npm run smoke (scripts/lib/newcomer-run.sh): the curl line works as printed
# (the admin token in it, 401 without it), a job posted with curl completes, Ctrl-C (SIGINT to the
# process group, as a terminal sends it) exits 0 and leaves no postgres behind, a second
# `npm start` uses the same data folder and still has the job, with its result.
# Removes the clone and the server's folder outside it. Every wait has a deadline.
# Prints PASS/FAIL lines; exits non-zero on the first failure, leaving no process behind.
#   bash scripts/root-first-run.sh        (as root; as another user it still checks the same run)
set -euo pipefail
src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$src" rev-parse HEAD)

NEWCOMER_NAME=root-first-run
INSTALL_DEADLINE_S=${ROOT_FIRST_RUN_INSTALL_DEADLINE_S:-900}
BOOT_DEADLINE_S=${ROOT_FIRST_RUN_BOOT_DEADLINE_S:-180} # nest build + initdb on a cold machine
STOP_DEADLINE_S=15
STATE_BASE=/var/lib/nest-pg-job-queue # where the app puts, as root, what the server account must reach
# shellcheck source=lib/newcomer-run.sh
. "$(dirname "$0")/lib/newcomer-run.sh"

repo=
# The app's folder for this clone outside it (as root): named after the clone and a hash of its path.
state_dir() {
  local real
  real=$(realpath "$repo")
  echo "$STATE_BASE/$(basename "$real")-$(printf %s "$real" | sha256sum | cut -c1-12)"
}
# Run by the EXIT trap once no process is left: only this clone's folder in STATE_BASE (the logged
# one, and the one its path names).
newcomer_cleanup_extra() {
  local dir
  for dir in "${data_dir%/postgres}" "$([ -n "$repo" ] && [ -d "$repo" ] && state_dir)"; do
    case "$dir" in "$STATE_BASE"/?*) rm -rf -- "$dir" ;; esac
  done
}

newcomer_init job-queue-root-first-run-XXXXXX # mode 0700
repo="$work/repo"
[ "$(stat -c %a "$work")" = 700 ] || fail "mktemp -d made $work with mode $(stat -c %a "$work"), not 700"
echo "root-first-run: uid $(id -u), clone of $commit in $work (mode 700)"
git -c advice.detachedHead=false clone -q "$src" "$repo" || fail "git clone $src"
git -C "$repo" -c advice.detachedHead=false checkout -q "$commit" || fail "git checkout $commit in the clone"
(cd "$repo" && timeout "$INSTALL_DEADLINE_S" npm ci --no-audit --no-fund >"$work/install.log" 2>&1) ||
  { tail -n 40 "$work/install.log" >&2; fail "npm ci failed or took over ${INSTALL_DEADLINE_S}s"; }
pass "npm ci in the clone ($((SECONDS - started_at)) s so far)"

project_dir=$repo
newcomer_run
