#!/usr/bin/env bash
# The web page's checks (part of scripts/test.sh): dependencies from the
# committed lockfile, the API types current with docs/openapi.yaml, the type
# check, unit tests, the production build and its size, and the browser
# suite in Debian's Chromium against `tutorflow serve`.
set -euo pipefail
cd "$(dirname "$0")/.."

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if (( node_major < 20 )); then
    echo "Node 20 or newer is needed for web/ (found: $(node --version 2>/dev/null || echo none))" >&2
    exit 1
fi

# npm ci from package-lock.json, again only when the lockfile changed.
if ! cmp -s web/package-lock.json web/node_modules/.tutorflow-lockfile 2>/dev/null; then
    npm --prefix web ci --no-audit --no-fund --loglevel=error
    cp web/package-lock.json web/node_modules/.tutorflow-lockfile
fi

npm --prefix web run --silent check:api
npm --prefix web run --silent check
npm --prefix web test --silent
npm --prefix web run --silent build -- --logLevel warn
npm --prefix web run --silent size

# Debian's Chromium (Playwright's own browser download is not used).
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x "$CHROMIUM" ]]; then
    as_root=()
    [[ $(id -u) == 0 ]] || as_root=(sudo -n)
    if command -v apt-get >/dev/null && "${as_root[@]}" true 2>/dev/null; then
        "${as_root[@]}" apt-get update -qq
        "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "the browser tests need Chromium at $CHROMIUM: sudo apt-get install chromium" >&2
        exit 1
    fi
fi
cargo build --quiet --locked --bin tutorflow
CHROMIUM="$CHROMIUM" node web/e2e/run.mjs
