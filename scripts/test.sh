#!/usr/bin/env bash
# Runs every check and test: the README's test command, and what CI runs.
# Installs what it needs itself (pinned) into project-local directories.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "format"
cargo fmt --all -- --check

step "lint"
cargo clippy --workspace --all-targets --locked -- -D warnings

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
    port=$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p .tutorflow
    .venv/bin/moto_server -H 127.0.0.1 -p "$port" >.tutorflow/moto.log 2>&1 &
    MOTO_PID=$!
    trap 'kill "$MOTO_PID" 2>/dev/null || true; wait "$MOTO_PID" 2>/dev/null || true' EXIT
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

step "content bundle"
cargo run --quiet --locked --bin tutorflow -- validate .

printf '\nall checks passed\n'
