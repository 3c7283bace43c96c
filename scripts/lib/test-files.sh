# Sourced from the repository root by scripts/test.sh and scripts/test-unit.sh: which node test
# files each tier runs (docs/CONVENTIONS.md, "Tests").
#
# A file that needs a Kafka broker, a schema registry, PostgreSQL or a browser says so in its name:
# `*.integration.test.ts`, `*.e2e.test.ts` (test/e2e), or it lives under test/drills. Every other
# `*.test.ts` is a unit test: it runs with none of them. Long drills (test/drills-long) run only
# with `npm run test:long`.

# Every test file `npm test` runs, one a line, sorted.
all_test_files() {
  find packages services test -name '*.test.ts' -not -path '*/node_modules/*' -not -path 'test/drills-long/*' | sort
}

# The broker tier: the files that need a broker, a schema registry, PostgreSQL or a browser.
broker_test_files() {
  all_test_files | grep -E '\.(integration|e2e)\.test\.ts$|^test/(e2e|drills)/'
}

# The files `npm run test:unit` runs: all of the above but the broker tier.
unit_test_files() {
  all_test_files | grep -v -E '\.(integration|e2e)\.test\.ts$|^test/(e2e|drills)/'
}

# Every file of both tiers in the order `npm test` runs them: the broker tier first, its slow files
# started early, then the short unit files, which fill the slots the slow ones leave.
ordered_test_files() {
  broker_test_files
  unit_test_files
}
