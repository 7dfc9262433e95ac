#!/usr/bin/env bash
# The Dockerfile's stages, run without Docker (no daemon on the CI machines), in clean temporary
# directories:
#   build:   the committed files, `npm ci --omit=dev`, `npm run build` (esbuild is a production dependency)
#   runtime: package files + production dependencies + dist/ only (no src/, no TypeScript, no tsx use),
#            `node --min-semi-space-size=16 --max-semi-space-size=32 dist/src/main.js` (the CMD) with NODE_ENV=production on the
#            embedded database until /readyz answers 200, then SIGTERM → exit 0
# then the deployment test (.ci/compose-topology.ts) from that runtime directory: the Dockerfile's and
# compose.yaml's header commands and compose.yaml's topology (migrate, then gateway-1 and gateway-2
# with compose's environment) on the machine's PostgreSQL and Redis, the admin CLI, a transfer
# through one instance read through the other, /metrics, SIGTERM within stop_grace_period; then
# compose.facade.yaml's (a facade in front of a service-mode upstream, a key made upstream used
# through the facade). What runs
# in place of each `docker …` command is tabled in that script's header and docs/production.md.
# Last, `npm start --silent` in the build directory (the two-command start), whose SIGTERM must reach
# Node and whose stdout must hold JSON lines only.
# Prints the start-up time of the compiled server: process start to the first 200 from /readyz.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
now_ms() { date +%s%3N; }

# Waits for /readyz on port $1 (pid $2); prints the milliseconds since $3.
wait_ready() {
  local port=$1 pid=$2 since=$3
  for _ in $(seq 1 1200); do
    if ! kill -0 "$pid" 2>/dev/null; then echo "the server exited before it was ready" >&2; return 1; fi
    if curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then echo $(( $(now_ms) - since )); return 0; fi
    sleep 0.1
  done
  echo "not ready after 120 s" >&2
  return 1
}

# Sends SIGTERM to pid $1 and expects exit code 0 within 30 s.
stop_cleanly() {
  local pid=$1
  kill -TERM "$pid"
  local code=0
  wait "$pid" || code=$?
  if [ "$code" -ne 0 ]; then echo "exit code $code after SIGTERM (expected 0)" >&2; return 1; fi
}

echo "== image build stage (clean directory: npm ci --omit=dev, npm run build)"
build="$work/build"
mkdir -p "$build"
git ls-files -z | xargs -0 -I{} cp --parents {} "$build"/
# `npm ci` refuses a lockfile that lacks entries for optional platform packages; the registry mirror
# these machines use lacks some of Biome's (a dev tool, not in the image) so the lockfile cannot
# carry them. Then the same locked versions are installed with `npm install --no-save`, and said so.
if ! (cd "$build" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error 2>"$work/npm-ci.err"); then
  if grep -q 'Missing: @biomejs/cli-' "$work/npm-ci.err"; then
    echo "npm ci: lockfile lacks Biome's other-platform packages (registry mirror gap); installing the locked versions with npm install --omit=dev --no-save"
    (cd "$build" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --no-save --loglevel=error)
  else
    cat "$work/npm-ci.err"; exit 1
  fi
fi
(cd "$build" && npm run -s build)
test -f "$build/dist/src/main.js"
test -d "$build/dist/src/db/migrations"

echo "== image runtime stage (production dependencies and dist/ only)"
runtime="$work/runtime"
mkdir -p "$runtime"
cp "$build/package.json" "$build/package-lock.json" "$runtime"/
cp -a "$build/node_modules" "$build/dist" "$runtime"/
port=$(free_port)
started=$(now_ms)
(cd "$runtime" && exec env NODE_ENV=production SECRETS_KEY="$(head -c 32 /dev/urandom | base64)" \
  PGLITE_DATA_DIR="$work/data-runtime" HOST=127.0.0.1 PORT="$port" DATABASE_URL= REDIS_URL= \
  SEED_DEMO=false node --min-semi-space-size=16 --max-semi-space-size=32 dist/src/main.js >"$work/runtime.log" 2>"$work/runtime.err") &
pid=$!
pids+=("$pid")
ms=$(wait_ready "$port" "$pid" "$started") || { tail -20 "$work/runtime.log" "$work/runtime.err"; exit 1; }
echo "compiled server: first 200 from /readyz ${ms} ms after start (fresh embedded database, written from the image the build carries)"
if grep -v '^{' "$work/runtime.log" | grep -q .; then
  echo "stdout (the log stream) of the production server held lines that are not JSON:"; grep -v '^{' "$work/runtime.log"; exit 1
fi
stop_cleanly "$pid"
started=$(now_ms)
(cd "$runtime" && exec env NODE_ENV=production SECRETS_KEY="$(head -c 32 /dev/urandom | base64)" \
  PGLITE_DATA_DIR="$work/data-runtime" HOST=127.0.0.1 PORT="$port" DATABASE_URL= REDIS_URL= MIGRATE_ON_START=false \
  SEED_DEMO=false node --min-semi-space-size=16 --max-semi-space-size=32 dist/src/main.js >>"$work/runtime.log" 2>>"$work/runtime.err") &
pid=$!
pids+=("$pid")
ms=$(wait_ready "$port" "$pid" "$started") || { tail -20 "$work/runtime.log" "$work/runtime.err"; exit 1; }
echo "compiled server: first 200 from /readyz ${ms} ms after start (existing database, MIGRATE_ON_START=false)"
stop_cleanly "$pid"

echo "== deployment test: the headers' docker commands and compose.yaml's topology, from the runtime directory"
node --import tsx .ci/compose-topology.ts --files "$build" --runtime "$runtime" --logs "$work/deployment"

echo "== npm start (builds when needed; SIGTERM through npm reaches Node)"
port=$(free_port)
started=$(now_ms)
(cd "$build" && exec env PGLITE_DATA_DIR="$work/data-start" HOST=127.0.0.1 PORT="$port" DATABASE_URL= REDIS_URL= \
  npm start --silent >"$work/start.log" 2>"$work/start.err") &
pid=$!
pids+=("$pid")
ms=$(wait_ready "$port" "$pid" "$started") || { tail -20 "$work/start.log" "$work/start.err"; exit 1; }
grep -q 'Sandbox API key (Full Access, shown once): pgw_sbx_' "$work/start.err" || {
  echo "npm start printed no sandbox key"; exit 1; }
if grep -q 'pgw_sbx_' "$work/start.log"; then echo "the sandbox key reached the JSON log (stdout)"; exit 1; fi
# --silent: npm's own "> partner-gateway@… start" banner would otherwise come first on stdout.
if grep -v '^{' "$work/start.log" | grep -q .; then
  echo "stdout of npm start --silent held lines that are not JSON:"; grep -v '^{' "$work/start.log"; exit 1; fi
echo "npm start: first 200 from /readyz ${ms} ms after start"
stop_cleanly "$pid"
echo "image stages OK"
