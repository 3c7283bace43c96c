# Sourced from the repository root by scripts/start.sh and scripts/test.sh (the README's two
# commands), so they run on a supported Node whatever Node the machine has:
#  1. installs the dependencies when node_modules is missing or older than package-lock.json. One
#     of them is the npm package `node`, a pinned devDependency whose install script (allowed in
#     package.json's `allowScripts`) puts that Node release in node_modules/.bin/node;
#  2. puts node_modules/.bin first on PATH, so `node`, `npx` and the processes they start use it
#     (npm scripts do this already; running the script by hand needs it here);
#  3. stops with a clear message when the Node it would use is older than the supported baseline;
#  4. keeps Node's compile cache (V8 code of every module, the type-stripped TypeScript included) in
#     .cache/node-compile, so each of the many Node processes a run starts (services, test files,
#     the CLI) loads the project's modules without compiling them again: about a third less CPU
#     per start. NODE_COMPILE_CACHE set by the caller wins; an empty value turns it off.

SLUICE_MIN_NODE_MAJOR=24

node_major() {
  node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0
}

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "== npm ci"
  if [ "$(node_major)" -lt "$SLUICE_MIN_NODE_MAJOR" ]; then
    # npm itself runs on the machine's older Node here: its warnings that the packages want a newer
    # one are expected (the install brings it), so only errors are shown.
    echo "   (npm runs on the machine's Node $(node --version 2>/dev/null || echo '?'); it installs the project's own Node)"
    npm ci --no-audit --no-fund --loglevel=error
  else
    npm ci --no-audit --no-fund
  fi
fi

export PATH="$PWD/node_modules/.bin:$PATH"
hash -r

if [ "$(node_major)" -lt "$SLUICE_MIN_NODE_MAJOR" ]; then
  echo "Sluice needs Node ${SLUICE_MIN_NODE_MAJOR} or newer; the Node found is $(node --version 2>/dev/null || echo 'none')" \
    "($(command -v node || echo 'not on PATH'))." >&2
  echo "The devDependency \`node\` provides it as node_modules/.bin/node: run \`npm ci\` and check that" \
    "npm ran the install script of the package \`node\` (allowed in package.json's \`allowScripts\`)." >&2
  exit 1
fi

export NODE_COMPILE_CACHE="${NODE_COMPILE_CACHE-$PWD/.cache/node-compile}"
[ -n "$NODE_COMPILE_CACHE" ] || unset NODE_COMPILE_CACHE
