# Sourced by scripts/test.sh and scripts/test-unit.sh: a tally of failed tests beside the runner's
# own exit code, so a run with a failed test never passes whatever code the runner ended with.
#   tally_begin                        sets TALLY_REPORTER: the reporter flags to add to `node --test`
#   CMD ... "${TALLY_REPORTER[@]}" ... || rc=$?
#   tally_end "$rc"                    the run's code: the runner's, or 1 when the tally counted a
#                                      failed test (scripts/lib/failure-tally.ts) or was not written
tally_begin() {
  TALLY_FILE="$(mktemp "${TMPDIR:-/tmp}/sluice-test-tally.XXXXXX")"
  TALLY_REPORTER=(--test-reporter=./scripts/lib/failure-tally.ts "--test-reporter-destination=$TALLY_FILE")
}

tally_end() {
  local rc="$1"
  local failed
  failed="$(node -e 'const t = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8") || "{}"); console.log(t.failed ?? "unknown")' "$TALLY_FILE" 2>/dev/null || echo unknown)"
  rm -f "$TALLY_FILE"
  if [ "$rc" -eq 0 ] && [ "$failed" != "0" ]; then
    echo "== the test runner ended with 0, but its tally of failed tests is ${failed}: the run fails" >&2
    return 1
  fi
  return "$rc"
}
