#!/usr/bin/env bash
# `npm run test:unit`: the quick tier. Runs every test file that needs no Kafka broker, schema
# registry, PostgreSQL or browser (scripts/lib/test-files.sh says which), with none provisioned:
# KAFKA_BROKERS is unset, so a file that reaches for a broker fails at once with a message naming
# the rule (`testBrokers()` in @sluice/testkit), which also ends that file's process two seconds
# later, whatever it left open, so such a file fails instead of hanging the run. (Not
# --test-force-exit: on Node 24 it ends a file before all of its suites have run.)
# With file arguments, runs those files the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/node-runtime.sh
source scripts/lib/test-files.sh
source scripts/lib/run-tests.sh

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(unit_test_files)
fi

unset KAFKA_BROKERS
export SLUICE_TEST_TIER=unit
export LOG_LEVEL="${LOG_LEVEL:-error}"

echo "== node --test, unit tier (${#files[@]} files, no broker)"
tally_begin
rc=0
node --test --test-concurrency="${TEST_CONCURRENCY:-2}" --test-timeout=60000 \
  --test-reporter="${TEST_REPORTER:-dot}" --test-reporter-destination=stdout "${TALLY_REPORTER[@]}" "${files[@]}" || rc=$?
tally_end "$rc"
