#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine, then run the whole suite.
# Used by the README's test command and by CI (.ci/run). Fails loudly on the first error.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }

if ! command -v chromium >/dev/null 2>&1; then
    log "installing Debian chromium (headless browser for the end-to-end tests)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi

log "installing Python packages"
python3 -m pip install -q --disable-pip-version-check -r requirements-dev.txt

if [ -z "${CWAL_TEST_DATABASE_URL:-}" ] && command -v pg_ctlcluster >/dev/null 2>&1; then
    if ! pg_isready -q -h 127.0.0.1 -p 5432; then
        log "starting PostgreSQL"
        pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start
        for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
    fi
    export CWAL_TEST_DATABASE_URL="postgresql+psycopg://postgres@127.0.0.1:5432/test"
fi
echo "PostgreSQL tests: ${CWAL_TEST_DATABASE_URL:-not configured (set CWAL_TEST_DATABASE_URL)}"

log "lint"
python3 -m ruff check .
python3 -m ruff format --check .

log "tests"
python3 -m pytest "$@"
