#!/usr/bin/env bash
# `npm start`: installs what is missing, then runs the whole pipeline locally (local Kafka unless
# KAFKA_BROKERS is set; SLUICE_CONFIG or the bundled demo config).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== npm ci (first run)"
  npm ci --no-audit --no-fund
fi
exec node --import tsx packages/runner/src/main.ts "$@"
