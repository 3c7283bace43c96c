#!/usr/bin/env bash
# `npm start`: installs what is missing (including the project's own Node, scripts/lib/node-runtime.sh),
# then runs the whole pipeline locally (local Kafka unless KAFKA_BROKERS is set; SLUICE_CONFIG or
# the bundled demo config).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/node-runtime.sh
exec node packages/runner/src/main.ts "$@"
