#!/usr/bin/env bash
# Lambda packaging figures for BENCHMARKS.md: every function's arm64
# bootstrap as deployed (README "Deploying to AWS": one `cargo lambda build`
# of the six, without the CLI), then for each release profile (opt-level
# "s" = [profile.release], 3 = release-o3, "z" = release-oz) the turn
# function's package and its cold start measured on this machine's
# architecture against moto (scripts/lambda_cold_start.py).
#
# Needs cargo-lambda (pip install cargo-lambda, which brings zig) and the
# aarch64-unknown-linux-gnu target (rustup target add). Each profile is a
# full release build per target: expect several minutes each on 2 cores.
#
# Usage: [PROFILES="release ..."] scripts/measure-lambda.sh [RUNS]
#        (default: all three profiles, 10 cold starts each; PROFILES=none
#        for the sizes of the six functions only)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-10}
profiles=(${PROFILES:-release release-o3 release-oz})
function=turn
out=.tutorflow/measure
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$out"

command -v cargo-lambda >/dev/null || { echo "cargo-lambda is needed: pip install cargo-lambda" >&2; exit 1; }
[[ -x .venv/bin/moto_server ]] || { echo "run scripts/test.sh once: it installs moto into .venv/" >&2; exit 1; }

# moto stands in for DynamoDB and S3; the content bundle is published to it.
port=$(.venv/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
.venv/bin/moto_server -H 127.0.0.1 -p "$port" >"$out/moto.log" 2>&1 &
moto_pid=$!
trap 'kill "$moto_pid" 2>/dev/null || true; wait "$moto_pid" 2>/dev/null || true' EXIT
endpoint="http://127.0.0.1:$port"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
for _ in $(seq 1 150); do
    .venv/bin/python -c "import urllib.request; urllib.request.urlopen('$endpoint/moto-api/', timeout=1)" 2>/dev/null && break
    sleep 0.2
done
.venv/bin/python -c "import boto3; boto3.client('s3', endpoint_url='$endpoint').create_bucket(Bucket='tutorflow-measure')"
cargo run --quiet --locked --bin tutorflow -- publish --bucket tutorflow-measure --prefix tutorflow --endpoint-url "$endpoint" .

# The deployed configuration, with the emulator endpoints and an env: drill
# key (no secrets extension off Lambda).
export TUTORFLOW_STORE=dynamodb TUTORFLOW_TABLE=tutorflow-measure TUTORFLOW_DYNAMODB_ENDPOINT="$endpoint"
export TUTORFLOW_CONTENT_SOURCE=s3 TUTORFLOW_CONTENT_BUCKET=tutorflow-measure TUTORFLOW_CONTENT_PREFIX=tutorflow
export TUTORFLOW_S3_ENDPOINT="$endpoint" TUTORFLOW_AUTH_MODE=apigw
export TUTORFLOW_DRILL_SECRET=env:MEASURE_DRILL_KEY MEASURE_DRILL_KEY=measure-drill-key-0123456789abcdef

# Every function as deployed, at [profile.release]; the project's goal is
# under 8 MB each. Stripped by the profile (`strip = true`).
cargo lambda build --quiet --locked --release --arm64 --workspace --exclude tutorflow-cli \
    >"$out/functions-arm64.log" 2>&1 || { cat "$out/functions-arm64.log" >&2; exit 1; }
printf '| function | arm64 bootstrap | arm64 zip | links SQLite |\n|---|---|---|---|\n'
for f in functions/*/; do
    f=$(basename "$f")
    bin="$target/lambda/$f/bootstrap"
    zip_bytes=$(.venv/bin/python -c "
import io, sys, zipfile
buf = io.BytesIO()
with zipfile.ZipFile(buf, 'w', zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[1], 'bootstrap')
print(len(buf.getvalue()))" "$bin")
    # SQLite's own version string is in every binary that links it.
    sqlite=no
    grep -q "SQLite format 3" "$bin" && sqlite=yes
    printf '| %s | %.1f MB | %.1f MB | %s |\n' "$f" \
        "$(.venv/bin/python -c "print($(stat -c %s "$bin") / 1e6)")" \
        "$(.venv/bin/python -c "print($zip_bytes / 1e6)")" "$sqlite"
done
echo
[[ "${profiles[*]}" == none ]] && exit 0

printf '| profile | opt-level | arm64 bootstrap | arm64 zip | %s init (median / max) | first response (median / max) | peak RSS |\n' "$(uname -m)"
printf '|---|---|---|---|---|---|---|\n'
for profile in "${profiles[@]}"; do
    level=$(awk -v p="[profile.$profile]" '
        $0 == p { inside = 1; next } /^\[/ { inside = 0 } inside && /^opt-level/ { print $3 }' Cargo.toml)
    # `--release` is what deploys: cargo-lambda then adds panic = "abort"
    # and target-cpu=neoverse-n1, which it adds to no `--profile` build.
    selects=(--profile "$profile")
    [[ $profile == release ]] && selects=(--release)
    cargo lambda build --quiet --locked "${selects[@]}" --arm64 -p "$function" >"$out/$profile-arm64.log" 2>&1 \
        || { cat "$out/$profile-arm64.log" >&2; exit 1; }
    mkdir -p "$out/$profile"
    cp "$target/lambda/$function/bootstrap" "$out/$profile/bootstrap-arm64"
    zip_bytes=$(.venv/bin/python -c "
import io, sys, zipfile
buf = io.BytesIO()
with zipfile.ZipFile(buf, 'w', zipfile.ZIP_DEFLATED) as z:
    z.write(sys.argv[1], 'bootstrap')
print(len(buf.getvalue()))" "$out/$profile/bootstrap-arm64")
    # Timed and measured: this machine's architecture, built by cargo
    # itself (unwinding on panic, no target-cpu), so not the package above;
    # the allocator and the heap are the same.
    cargo build --quiet --locked --profile "$profile" -p "$function"
    cold=$(.venv/bin/python scripts/lambda_cold_start.py "$target/$profile/$function" --runs "$runs" --function "$function")
    field() { .venv/bin/python -c "import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$cold" "$1"; }
    mb() { .venv/bin/python -c "print(f'{int(__import__(\"sys\").argv[1]) / 1e6:.1f} MB')" "$1"; }
    printf '| %s | %s | %s | %s | %s / %s ms | %s / %s ms | %s MB |\n' \
        "$profile" "${level:-inherited}" "$(mb "$(stat -c %s "$out/$profile/bootstrap-arm64")")" "$(mb "$zip_bytes")" \
        "$(field median_init_ms)" "$(field max_init_ms)" "$(field median_response_ms)" "$(field max_response_ms)" \
        "$(field median_peak_rss_mb)"
done

# The cold-init target is for content read from local files: the
# release binary once more, with this checkout's content instead of S3 (the
# state stays in DynamoDB on moto: the functions link no embedded store).
unset TUTORFLOW_CONTENT_SOURCE TUTORFLOW_CONTENT_BUCKET TUTORFLOW_CONTENT_PREFIX TUTORFLOW_S3_ENDPOINT
cold=$(.venv/bin/python scripts/lambda_cold_start.py "$target/release/$function" --runs "$runs" --function "$function")
printf '\nrelease, local files and DynamoDB (moto): %s init median %s / max %s ms, first response median %s / max %s ms, peak RSS %s MB\n' \
    "$(uname -m)" "$(field median_init_ms)" "$(field max_init_ms)" "$(field median_response_ms)" "$(field max_response_ms)" \
    "$(field median_peak_rss_mb)"
