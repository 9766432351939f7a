# shellcheck shell=bash
# The README's first command as a newcomer runs it, shared by scripts/smoke.sh (this checkout, a
# throwaway data dir) and scripts/root-first-run.sh (as root, a fresh 0700 clone, the data dir left
# to the app). Sourced, not run. With DATABASE_URL unset, `npm start` serves the example app on an
# embedded PostgreSQL and logs "data in …"; the management routes (/jobs…) want the admin token:
# with EXAMPLE_ADMIN_TOKEN unset, each run reads the one `npm start` made from its "Try: curl …"
# line (401 without it or with a wrong one), and the first runs that line as printed. A job posted
# with curl completes; Ctrl-C (SIGINT to the whole process group, as a terminal sends it) exits 0
# within STOP_DEADLINE_S and leaves no postgres behind; a second `npm start` uses the same data
# folder and still has the job, completed, with its result. Every wait has a deadline. Prints
# PASS/FAIL lines; exits non-zero on the first failure; the EXIT trap leaves no process behind,
# removes $work and prints "<name>: <seconds> s".
#
# The sourcing script (under `set -euo pipefail`) sets what follows, calls newcomer_init TEMPLATE
# (sets the traps, makes $work with mktemp, picks free ports), prepares, then calls newcomer_run:
#   NEWCOMER_NAME          names the run: "PASS: <name>" at the end, the job's <name>.png
#   BOOT_DEADLINE_S        per `npm start` until its "Try: curl …" line (nest build + initdb)
#   STOP_DEADLINE_S        per Ctrl-C until the process group is gone
#   project_dir            where `npm start` runs
#   NEWCOMER_DATA_DIR      EMBEDDED_PG_DATA_DIR for `npm start`, which must log it as its data
#                          folder; unset or empty: the app picks the folder (read from its log)
#                          (these two may name places in $work: set them after newcomer_init)
#   newcomer_cleanup_extra optional function the EXIT trap runs once no process is left (it may
#                          read $data_dir, the folder the app logged); it must not fail
unset DATABASE_URL EMBEDDED_PG_DATA_DIR EXAMPLE_ADMIN_TOKEN

JOB_DEADLINE_S=30

started_at=$SECONDS
work=
app_pid= # npm, the leader of its own process group (setsid): npm, sh, node
run=0
data_dir= # the server's data folder: the one given, else the one the first run logged
try_line= # the run's "Try: curl …" line, and the admin token in it (`npm start` makes one per run)
token=

pass() { echo "PASS: $*"; }
fail() {
  echo "FAIL: $*" >&2
  if [ "$run" -gt 0 ] && [ -f "$work/run$run.log" ]; then
    echo "--- last lines of npm start (run $run) ---" >&2
    tail -n 40 "$work/run$run.log" >&2
  fi
  exit 1
}

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
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
# The data folder the current run logged ("Embedded PostgreSQL started (data in …)"); may be empty.
logged_data_dir() {
  [ "$run" -gt 0 ] && [ -f "$work/run$run.log" ] || return 0
  grep -a -o 'data in [^)]*' "$work/run$run.log" | head -n 1 | cut -c9- || true
}

newcomer_cleanup() {
  local status=$? pid
  if group_alive; then
    kill -INT -- "-$app_pid" 2>/dev/null || true
    for _ in $(seq 1 50); do group_alive || break; sleep 0.1; done
    group_alive && kill -KILL -- "-$app_pid" 2>/dev/null || true
  fi
  [ -n "$data_dir" ] || data_dir=$(logged_data_dir) # a first run stopped before its "Try:" line
  if pid=$(postgres_pid); then
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  if declare -F newcomer_cleanup_extra >/dev/null; then newcomer_cleanup_extra || true; fi
  [ -z "$work" ] || rm -rf -- "$work"
  echo "$NEWCOMER_NAME: $((SECONDS - started_at)) s"
  exit "$status"
}

# newcomer_init TEMPLATE: the traps, then $work (mktemp -d -t TEMPLATE) and two free ports.
newcomer_init() {
  trap newcomer_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  work=$(mktemp -d -t "$1")
  app_port=$(free_port)
  pg_port=$(free_port)
  base="http://127.0.0.1:$app_port"
}

# Prints one field of the JSON object on stdin (objects as JSON); nothing when it is not JSON.
json_field() {
  node -e "let s='';process.stdin.on('data',(d)=>(s+=d)).on('end',()=>{try{const v=JSON.parse(s)[process.argv[1]];console.log(typeof v==='object'?JSON.stringify(v):v)}catch{}})" "$1"
}

# curl as the admin: the token of the current run.
admin_curl() { curl -sf --max-time 5 -H "authorization: Bearer $token" "$@"; }

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

start_app() {
  local deadline logged expected env=(NO_COLOR=1 EMBEDDED_PG_PORT="$pg_port" PORT="$app_port")
  [ -z "${NEWCOMER_DATA_DIR:-}" ] || env+=(EMBEDDED_PG_DATA_DIR="$NEWCOMER_DATA_DIR")
  run=$((run + 1))
  # setsid: npm leads a process group of its own, so the SIGINT below reaches npm, sh and node
  # at once, as a terminal's Ctrl-C does (the subshell execs env, env setsid, setsid npm: one pid).
  # NO_COLOR: plain log lines to read the data folder and the admin token from.
  (cd "$project_dir" && exec env "${env[@]}" setsid npm start >"$work/run$run.log" 2>&1) &
  app_pid=$!
  deadline=$((SECONDS + BOOT_DEADLINE_S))
  # The "Try: curl …" line comes once the app listens.
  until grep -q -a 'Try: curl ' "$work/run$run.log"; do
    kill -0 "$app_pid" 2>/dev/null || fail "run $run: npm start exited before serving $base"
    [ "$SECONDS" -lt "$deadline" ] || fail "run $run: no \"Try: curl …\" line within ${BOOT_DEADLINE_S}s"
    sleep 0.5
  done
  read_token
  logged=$(logged_data_dir)
  [ -n "$logged" ] || fail "run $run: no \"data in …\" line in the log"
  expected=$data_dir
  data_dir=$logged # the server this run started: the one the EXIT trap must stop
  if [ -n "$expected" ] && [ "$logged" != "$expected" ]; then
    [ "$run" -gt 1 ] || fail "run $run: data in $logged, not in the EMBEDDED_PG_DATA_DIR given, $expected"
    fail "run $run: data in $logged, the first run's was in $expected"
  fi
  pass "run $run: npm start serves $base (embedded PostgreSQL on port $pg_port, data in $data_dir); /jobs wants the token its curl line prints"
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
  if pgrep -f -- "-D $data_dir" >/dev/null; then
    fail "run $run: a postgres process on $data_dir is still running after Ctrl-C"
  fi
  pass "run $run: Ctrl-C: exited 0 after $(($(now_ms) - started)) ms, no postgres left"
}

get_status() { admin_curl "$base/jobs/$1" | json_field status; }

# The two runs: the printed curl line, a job posted with curl completes, Ctrl-C, restart, the job.
newcomer_run() {
  local tried job id deadline after name="$NEWCOMER_NAME.png"
  data_dir=${NEWCOMER_DATA_DIR:-}
  start_app
  # The curl line `npm start` printed, run as a newcomer pastes it: it enqueues cat.png, then shows
  # the stats with the run's token.
  tried=$(bash -c "$try_line") || fail "the printed curl line failed: $try_line"
  [[ "$tried" == *'"image.process":{'* ]] || fail "the printed curl line showed no stats: $tried"
  pass "the printed curl line works as printed: $try_line"
  job=$(curl -sf --max-time 5 -X POST "$base/images" -H 'content-type: application/json' \
    -d "{\"name\":\"$name\"}") || fail "POST /images failed"
  id=$(echo "$job" | json_field id)
  [[ "$id" =~ ^[0-9]+$ ]] || fail "POST /images answered without a job id: $job"
  deadline=$((SECONDS + JOB_DEADLINE_S))
  until [ "$(get_status "$id")" = completed ]; do
    [ "$SECONDS" -lt "$deadline" ] ||
      fail "job $id not completed within ${JOB_DEADLINE_S}s: $(admin_curl "$base/jobs/$id")"
    sleep 0.2
  done
  pass "job $id ($name) posted with curl completed"
  stop_app

  start_app
  after=$(admin_curl "$base/jobs/$id") || fail "GET /jobs/$id failed after the restart"
  [ "$(echo "$after" | json_field status)" = completed ] ||
    fail "after the restart job $id is not completed: $after"
  [ "$(echo "$after" | json_field result)" = "{\"thumbnail\":\"thumbs/$name\"}" ] ||
    fail "after the restart job $id lost its result: $after"
  pass "after the restart job $id is still completed, with its result"
  stop_app

  echo "PASS: $NEWCOMER_NAME"
}
