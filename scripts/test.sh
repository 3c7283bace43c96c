#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what is missing (including the project's own
# Node, scripts/lib/node-runtime.sh), type-checks, lints and checks formatting, provisions a real
# local Kafka unless KAFKA_BROKERS is set, runs every test, and stops the broker again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/node-runtime.sh
source scripts/lib/test-files.sh
source scripts/lib/run-tests.sh

echo "== node $(node --version) ($(command -v node))"

echo "== type-check"
npx --no-install tsc -p tsconfig.json --noEmit

echo "== lint and format check (biome ci)"
npx --no-install biome ci --error-on-warnings

if [ -d clients/go ]; then
  echo "== go test -race (clients/go)"
  (cd clients/go && go test -race -count=1 ./...)
fi

# Node test files: every *.test.ts outside node_modules, both tiers (scripts/lib/test-files.sh).
# Long drills live under test/drills-long and run with `npm run test:long`.
mapfile -t files < <(ordered_test_files)

# Quiet service logs in tests unless asked for (LOG_LEVEL=info npm test).
export LOG_LEVEL="${LOG_LEVEL:-error}"

echo "== node --test (${#files[@]} files)"
tally_begin
rc=0
node packages/local-kafka/src/cli.ts run -- \
  node --test --test-concurrency="${TEST_CONCURRENCY:-2}" --test-reporter=spec --test-reporter-destination=stdout \
  "${TALLY_REPORTER[@]}" "${files[@]}" || rc=$?
tally_end "$rc"
