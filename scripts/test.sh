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

step "tests"
cargo test --workspace --locked

step "content bundle"
cargo run --quiet --locked --bin tutorflow -- validate .

printf '\nall checks passed\n'
