#!/usr/bin/env bash
# The README's first command as root in a private folder: a fresh clone of this repo's HEAD in a
# `mktemp -d` folder (mode 0700, like /root), `npm ci`, then `npm start` with DATABASE_URL unset.
# The embedded server runs as the `postgres` user, which cannot enter that folder: its data (and
# a copy of the binaries) must land where it can (/var/lib/nest-pg-job-queue/<project>-<hash>).
# Checks: the app answers, a job posted with curl completes, Ctrl-C (SIGINT to the process group,
# as a terminal sends it) exits 0 and leaves no postgres behind, a second `npm start` still has the
# job. The management routes (/jobs…) want the admin token: each run reads the one `npm start` made
# (EXAMPLE_ADMIN_TOKEN unset) from its "Try: curl …" line, and the first runs that line as printed.
# Removes the clone and the server's folder outside it. Every wait has a deadline.
# Prints PASS/FAIL lines; exits non-zero on the first failure, leaving no process behind.
#   bash scripts/root-first-run.sh        (as root; as another user it still checks the same run)
set -euo pipefail
src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$src" rev-parse HEAD)
unset DATABASE_URL EMBEDDED_PG_DATA_DIR EXAMPLE_ADMIN_TOKEN

INSTALL_DEADLINE_S=${ROOT_FIRST_RUN_INSTALL_DEADLINE_S:-900}
BOOT_DEADLINE_S=${ROOT_FIRST_RUN_BOOT_DEADLINE_S:-180} # nest build + initdb on a cold machine
JOB_DEADLINE_S=30
STOP_DEADLINE_S=15
STATE_BASE=/var/lib/nest-pg-job-queue # where the app puts, as root, what `postgres` must reach

started_at=$SECONDS
work=$(mktemp -d -t job-queue-root-first-run-XXXXXX) # mode 0700
repo="$work/repo"
app_pid= # npm, the leader of its own process group (setsid): npm, sh, node
run=0
data_dir= # from the app's "data in …" line

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}
app_port=$(free_port)
pg_port=$(free_port)
base="http://127.0.0.1:$app_port"

pass() { echo "PASS: $*"; }
fail() {
  echo "FAIL: $*" >&2
  if [ "$run" -gt 0 ] && [ -f "$work/run$run.log" ]; then
    echo "--- last lines of npm start (run $run) ---" >&2
    tail -n 40 "$work/run$run.log" >&2
  fi
  exit 1
}

group_alive() { [ -n "$app_pid" ] && kill -0 -- "-$app_pid" 2>/dev/null; }
# The server runs in a process group of its own (detached): find it by its data folder's lock file.
postgres_pid() {
  local pid
  [ -n "$data_dir" ] && [ -f "$data_dir/postmaster.pid" ] || return 1
  pid=$(head -n 1 "$data_dir/postmaster.pid")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && ps -o args= -p "$pid" | grep -q -- "$data_dir" &&
    echo "$pid"
}
# The app's folder for this clone outside it (as root): named after the clone and a hash of its path.
state_dir() {
  local real
  real=$(realpath "$repo")
  echo "$STATE_BASE/$(basename "$real")-$(printf %s "$real" | sha256sum | cut -c1-12)"
}

cleanup() {
  local status=$? pid dir
  if group_alive; then
    kill -INT -- "-$app_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do group_alive || break; sleep 0.1; done
    group_alive && kill -KILL -- "-$app_pid" 2>/dev/null || true
  fi
  if pid=$(postgres_pid); then
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  # Only this clone's folder in STATE_BASE (the logged one, and the one its path names).
  for dir in "${data_dir%/postgres}" "$([ -d "$repo" ] && state_dir)"; do
    case "$dir" in "$STATE_BASE"/?*) rm -rf -- "$dir" ;; esac
  done
  rm -rf -- "$work"
  echo "root-first-run: $((SECONDS - started_at)) s"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Prints one field of the JSON object on stdin (objects as JSON); nothing when it is not JSON.
json_field() {
  node -e "let s='';process.stdin.on('data',(d)=>(s+=d)).on('end',()=>{try{const v=JSON.parse(s)[process.argv[1]];console.log(typeof v==='object'?JSON.stringify(v):v)}catch{}})" "$1"
}

[ "$(stat -c %a "$work")" = 700 ] || fail "mktemp -d made $work with mode $(stat -c %a "$work"), not 700"
echo "root-first-run: uid $(id -u), clone of $commit in $work (mode 700)"
git -c advice.detachedHead=false clone -q "$src" "$repo" || fail "git clone $src"
git -C "$repo" -c advice.detachedHead=false checkout -q "$commit" || fail "git checkout $commit in the clone"
(cd "$repo" && timeout "$INSTALL_DEADLINE_S" npm ci --no-audit --no-fund >"$work/install.log" 2>&1) ||
  { tail -n 40 "$work/install.log" >&2; fail "npm ci failed or took over ${INSTALL_DEADLINE_S}s"; }
pass "npm ci in the clone ($((SECONDS - started_at)) s so far)"

# The run's "Try: curl …" line, and the admin token in it (`npm start` makes one per run).
try_line=
token=
read_token() {
  local code
  try_line=$(grep -a -o 'Try: curl .*' "$work/run$run.log" | head -n 1 | cut -c6-)
  token=$(printf '%s' "$try_line" | grep -o 'authorization: Bearer [A-Za-z0-9_-]*' | cut -c23-)
  [ -n "$token" ] || fail "run $run: no admin token in the curl line: $try_line"
  code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$base/jobs/stats")
  [ "$code" = 401 ] || fail "run $run: GET /jobs/stats without the token answered $code, not 401"
  code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' -H 'authorization: Bearer wrong' "$base/jobs/stats")
  [ "$code" = 401 ] || fail "run $run: GET /jobs/stats with a wrong token answered $code, not 401"
  admin_curl -o /dev/null "$base/jobs/stats" || fail "run $run: GET /jobs/stats with the printed token failed"
}
# curl as the admin: the token of the current run.
admin_curl() { curl -sf --max-time 5 -H "authorization: Bearer $token" "$@"; }

start_app() {
  run=$((run + 1))
  # setsid: npm leads a process group of its own, so the SIGINT below reaches npm, sh and node
  # at once, as a terminal's Ctrl-C does. NO_COLOR: plain log lines to read the data folder and
  # the admin token from.
  (cd "$repo" && NO_COLOR=1 EMBEDDED_PG_PORT="$pg_port" PORT="$app_port" \
    exec setsid npm start >"$work/run$run.log" 2>&1) &
  app_pid=$!
  local deadline=$((SECONDS + BOOT_DEADLINE_S)) logged
  # The "Try: curl …" line comes once the app listens.
  until grep -q -a 'Try: curl ' "$work/run$run.log"; do
    kill -0 "$app_pid" 2>/dev/null || fail "run $run: npm start exited before serving $base"
    [ "$SECONDS" -lt "$deadline" ] || fail "run $run: no \"Try: curl …\" line within ${BOOT_DEADLINE_S}s"
    sleep 0.5
  done
  read_token
  logged=$(grep -a -o 'data in [^)]*' "$work/run$run.log" | head -n 1 | cut -c9-)
  [ -n "$logged" ] || fail "run $run: no \"data in …\" line in the log"
  [ -z "$data_dir" ] || [ "$logged" = "$data_dir" ] ||
    fail "run $run: data in $logged, the first run's was in $data_dir"
  data_dir=$logged
  pass "run $run: npm start serves $base (embedded PostgreSQL, data in $data_dir); /jobs wants the token its curl line prints"
}

now_ms() { date +%s%3N; }

stop_app() {
  local started code=0 pid
  group_alive || fail "run $run: npm start exited before Ctrl-C"
  started=$(now_ms)
  kill -INT -- "-$app_pid"
  while group_alive; do
    [ $(($(now_ms) - started)) -lt $((STOP_DEADLINE_S * 1000)) ] ||
      fail "run $run: still running ${STOP_DEADLINE_S}s after Ctrl-C: $(ps -o pid=,args= -g "$app_pid" | tr '\n' ';')"
    sleep 0.1
  done
  wait "$app_pid" || code=$?
  app_pid=
  [ "$code" -eq 0 ] || fail "run $run: npm start exited with $code after Ctrl-C (expected 0)"
  if pid=$(postgres_pid); then fail "run $run: postgres (pid $pid) still running after Ctrl-C"; fi
  pass "run $run: Ctrl-C: exited 0 after $(($(now_ms) - started)) ms, no postgres left"
}

get_status() { admin_curl "$base/jobs/$1" | json_field status; }

start_app
# The curl line `npm start` printed, run as a newcomer pastes it: it enqueues cat.png, then shows
# the stats with the run's token.
tried=$(bash -c "$try_line") || fail "the printed curl line failed: $try_line"
[[ "$tried" == *'"image.process":{'* ]] || fail "the printed curl line showed no stats: $tried"
pass "the printed curl line works as printed: $try_line"
job=$(curl -sf --max-time 5 -X POST "$base/images" -H 'content-type: application/json' \
  -d '{"name":"cat.png"}') || fail "POST /images failed"
id=$(echo "$job" | json_field id)
[[ "$id" =~ ^[0-9]+$ ]] || fail "POST /images answered without a job id: $job"
deadline=$((SECONDS + JOB_DEADLINE_S))
until [ "$(get_status "$id")" = completed ]; do
  [ "$SECONDS" -lt "$deadline" ] ||
    fail "job $id not completed within ${JOB_DEADLINE_S}s: $(admin_curl "$base/jobs/$id")"
  sleep 0.2
done
pass "job $id posted with curl completed"
stop_app

start_app
after=$(admin_curl "$base/jobs/$id") || fail "GET /jobs/$id failed after the restart"
[ "$(echo "$after" | json_field status)" = completed ] ||
  fail "after the restart job $id is not completed: $after"
pass "after the restart job $id is still completed"
stop_app

echo "PASS: root-first-run"
