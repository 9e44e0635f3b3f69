#!/usr/bin/env bash
# Runs every check and test: the README's test command, and what CI runs.
# Installs what it needs itself (pinned) into project-local directories.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# Servers started for this run, stopped on exit, pass or fail. Each runs in
# its own process group (setsid), so its children stop with it.
BACKGROUND=()
stop_background() {
    local pid
    for pid in "${BACKGROUND[@]}"; do
        kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
}
trap stop_background EXIT

free_port() {
    .venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

step "format"
cargo fmt --all -- --check

step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings

# The library and the CLI read one way (docs/architecture.md, "Layers"):
# no two files, and no two folders of one folder, import each other.
step "import circles"
python3 scripts/import_cycles.py shared/src cli/src

# Broken or private intra-doc links, bad code blocks: the shared library's
# API docs stay free of warnings (the only library; its dependencies' docs
# are not built).
step "docs"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --locked --quiet -p tutorflow

# Python tools (moto server, cfn-lint, the SAM translator), pinned, in .venv/;
# reinstalled only when scripts/test-requirements.txt changes.
ensure_venv() {
    local requirements=scripts/test-requirements.txt
    local stamp=.venv/.test-requirements
    if ! cmp -s "$requirements" "$stamp" 2>/dev/null; then
        command -v python3 >/dev/null || { echo "python3 is needed for moto server and cfn-lint" >&2; exit 1; }
        python3 -m venv .venv
        .venv/bin/pip install --quiet --disable-pip-version-check --require-virtualenv \
            -r "$requirements"
        cp "$requirements" "$stamp"
    fi
}

# The SAM template as written, then as CloudFormation will expand it.
step "infrastructure template"
ensure_venv
.venv/bin/cfn-lint infra/template.yaml
mkdir -p .tutorflow
.venv/bin/python scripts/sam_transform.py infra/template.yaml >.tutorflow/template.transformed.json
.venv/bin/cfn-lint .tutorflow/template.transformed.json
echo "$(grep "^cfn-lint==" scripts/test-requirements.txt): infra/template.yaml clean, before and after the SAM transform"

# The storage suite runs DynamoDB and S3 tests against moto server, installed
# pinned into .venv/ and started on a free loopback port for this run only.
# Set TUTORFLOW_TEST_AWS_ENDPOINT to use an emulator that is already running,
# or TUTORFLOW_TEST_REAL_AWS=1 for real AWS (see the README).
start_moto() {
    ensure_venv
    local port
    port=$(free_port)
    mkdir -p .tutorflow
    # One request at a time: see scripts/moto_serial.py for why.
    setsid .venv/bin/python scripts/moto_serial.py 127.0.0.1 "$port" >.tutorflow/moto.log 2>&1 &
    MOTO_PID=$!
    BACKGROUND+=("$MOTO_PID")
    local url="http://127.0.0.1:$port"
    for _ in $(seq 1 150); do
        if .venv/bin/python -c "import urllib.request; urllib.request.urlopen('$url/moto-api/', timeout=1)" 2>/dev/null; then
            export TUTORFLOW_TEST_AWS_ENDPOINT="$url"
            # The emulator accepts any credentials; the SDK's default chain needs some.
            export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
            export AWS_EC2_METADATA_DISABLED=true
            echo "$(grep "^moto==" scripts/test-requirements.txt) server on $url"
            return
        fi
        if ! kill -0 "$MOTO_PID" 2>/dev/null; then
            cat .tutorflow/moto.log >&2
            echo "moto server exited before answering" >&2
            exit 1
        fi
        sleep 0.2
    done
    echo "moto server did not answer on $url within 30 s" >&2
    exit 1
}

step "storage emulator"
if [[ "${TUTORFLOW_TEST_REAL_AWS:-}" == 1 ]]; then
    echo "storage suite runs against real AWS (TUTORFLOW_TEST_REAL_AWS=1)"
elif [[ -n "${TUTORFLOW_TEST_AWS_ENDPOINT:-}" ]]; then
    echo "using the emulator at $TUTORFLOW_TEST_AWS_ENDPOINT"
else
    start_moto
fi

step "tests"
cargo test --workspace --locked --no-fail-fast

step "API smoke (schemathesis against tutorflow serve)"
bash scripts/api-smoke.sh

# The real function binaries under `cargo lambda watch` (router and
# environment in the root Cargo.toml), sent the committed API Gateway events
# with `cargo lambda invoke`: a thread created by the turn function, a turn
# on it, and the thread read back by the summary function from the SQLite
# file they share; then a streamed turn. cargo-lambda is pinned in
# scripts/cargo-lambda-requirements.txt.
# start_cargo_lambda_watch NAME [WATCH_ARGS...]: state in
# .tutorflow/cargo-lambda-NAME.sqlite, output in .tutorflow/cargo-lambda-NAME.log.
start_cargo_lambda_watch() {
    local name=$1
    shift
    local requirements=scripts/cargo-lambda-requirements.txt
    local stamp=.venv/.cargo-lambda-requirements
    if ! cmp -s "$requirements" "$stamp" 2>/dev/null; then
        command -v python3 >/dev/null || { echo "python3 is needed to install cargo-lambda" >&2; exit 1; }
        [[ -x .venv/bin/python ]] || python3 -m venv .venv
        .venv/bin/pip install --quiet --disable-pip-version-check --require-virtualenv \
            --no-deps -r "$requirements"
        cp "$requirements" "$stamp"
    fi
    # Built first, so that an invocation does not wait for the compiler.
    # After `cargo test` this rebuilds dependencies without the features the
    # dev-dependencies add (2-3 minutes); `cargo run --bin tutorflow` in the
    # next step needs the same build and reuses it.
    # The functions under watch keep state in SQLite: a feature that the
    # Lambda builds leave out.
    cargo build --quiet --locked -p turn -p summary -p sweep --features tutorflow/sqlite
    mkdir -p .tutorflow
    local store=.tutorflow/cargo-lambda-$name.sqlite
    rm -f "$store" "$store-wal" "$store-shm"
    WATCH_PORT=$(free_port)
    WATCH_LOG=.tutorflow/cargo-lambda-$name.log
    setsid .venv/bin/cargo-lambda lambda watch --invoke-address 127.0.0.1 --invoke-port "$WATCH_PORT" \
        --features tutorflow/sqlite --ignore-changes --env-var "TUTORFLOW_SQLITE_PATH=$store" "$@" \
        >"$WATCH_LOG" 2>&1 &
    local pid=$!
    BACKGROUND+=("$pid")
    for _ in $(seq 1 150); do
        # Any HTTP answer, even a 404 for an unrouted path, means it listens.
        if .venv/bin/python -c "import urllib.request, urllib.error
try: urllib.request.urlopen('http://127.0.0.1:$WATCH_PORT/', timeout=1)
except urllib.error.HTTPError: pass" 2>/dev/null; then
            echo "$(grep "^cargo-lambda==" "$requirements") watch on 127.0.0.1:$WATCH_PORT"
            return
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    cat "$WATCH_LOG" >&2
    echo "cargo lambda watch did not answer on 127.0.0.1:$WATCH_PORT within 30 s" >&2
    exit 1
}

# invoke FUNCTION EVENT_FILE STATUS [FIELD]: sends the event through
# `cargo lambda invoke`, fails unless the function answers STATUS, and
# prints the response body's FIELD.
invoke() {
    local response
    response=$(.venv/bin/cargo-lambda lambda invoke "$1" --invoke-address 127.0.0.1 \
        --invoke-port "$WATCH_PORT" --data-file "$2") || { cat "$WATCH_LOG" >&2; exit 1; }
    RESPONSE="$response" .venv/bin/python - "$@" <<'PY' || { cat "$WATCH_LOG" >&2; exit 1; }
import json, os, sys
function, event, status, field = (sys.argv[1:] + [""])[:4]
response = json.loads(os.environ["RESPONSE"])
body = json.loads(response.get("body") or "null")
if response.get("statusCode") != int(status):
    sys.exit(f"cargo lambda invoke {function} --data-file {event}: expected {status}, "
             f"got {response.get('statusCode')}: {body}")
print(f"cargo lambda invoke {function} --data-file {event}: {status}", file=sys.stderr)
if field:
    print(body[field])
PY
}

step "cargo lambda"
start_cargo_lambda_watch test
thread=$(invoke turn tests/events/turn/create-thread.json 201 threadId)
sed "s/FIXTURE_THREAD_ID/$thread/g" tests/events/turn/turn.json >.tutorflow/cargo-lambda-turn.json
invoke turn .tutorflow/cargo-lambda-turn.json 200
sed "s/FIXTURE_THREAD_ID/$thread/g" tests/events/summary/get-thread.json >.tutorflow/cargo-lambda-get-thread.json
read_back=$(invoke summary .tutorflow/cargo-lambda-get-thread.json 200 threadId)
if [[ "$read_back" != "$thread" ]]; then
    echo "the summary function read thread $read_back back, not $thread" >&2
    exit 1
fi
# The scheduled sweep: not an HTTP function, it answers what it did.
swept=$(.venv/bin/cargo-lambda lambda invoke sweep --invoke-address 127.0.0.1 \
    --invoke-port "$WATCH_PORT" --data-file tests/events/sweep/scheduled.json) ||
    { cat "$WATCH_LOG" >&2; exit 1; }
SWEPT="$swept" .venv/bin/python - <<'PY' || { cat "$WATCH_LOG" >&2; exit 1; }
import json, os, sys
report = json.loads(os.environ["SWEPT"])
if set(report) != {"checked", "expired", "failed", "more"} or report["failed"]:
    sys.exit(f"cargo lambda invoke sweep: {report}")
print(f"cargo lambda invoke sweep --data-file tests/events/sweep/scheduled.json: {report}",
      file=sys.stderr)
PY

# The streaming twin (TurnStreamFunction on AWS): the turn binary with
# response streaming on. `cargo lambda invoke` cannot read a streamed
# answer (it expects a buffered payload), so this watch is called through
# its router over HTTP: a thread, then a turn asking for text/event-stream,
# which must arrive as delta events and one final event.
start_cargo_lambda_watch streaming --env-var TUTORFLOW_RESPONSE_STREAMING=true
.venv/bin/python - "$WATCH_PORT" <<'PY' || { cat "$WATCH_LOG" >&2; exit 1; }
import json, sys, urllib.request
base = f"http://127.0.0.1:{sys.argv[1]}"
token = open("tests/events/dev-token.jwt").read().strip()
def post(path, body, accept):
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST", headers={
        "authorization": f"Bearer {token}", "content-type": "application/json", "accept": accept})
    return urllib.request.urlopen(request, timeout=120)
with post("/threads", {"courseId": "prealgebra"}, "application/json") as response:
    thread = json.load(response)["threadId"]
with post(f"/threads/{thread}/turn", {"messageText": "what is a ratio?"}, "text/event-stream") as response:
    content_type = response.headers["content-type"]
    text = response.read().decode()
events = [dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
          for block in text.split("\n\n") if block.strip()]
names = [e.get("event") for e in events]
if content_type != "text/event-stream" or names[-1:] != ["final"] or "delta" not in names:
    sys.exit(f"streamed turn under cargo lambda watch: {content_type}, events {names}")
if not json.loads(events[-1]["data"])["messages"]:
    sys.exit(f"streamed turn under cargo lambda watch: a final event without messages: {events[-1]}")
print(f"streamed turn under cargo lambda watch: {names.count('delta')} delta events, then final",
      file=sys.stderr)
PY

step "content bundle"
cargo run --quiet --locked --bin tutorflow -- validate .

step "workflow tests"
cargo run --quiet --locked --bin tutorflow -- test workflows/tests

step "web page (npm ci, API types, type check, unit tests, build size, Chromium)"
bash scripts/web-test.sh

printf '\nall checks passed\n'
