#!/usr/bin/env bash
# The OpenAPI document as third parties meet it, from the release server: Redocly CLI
# (recommended rules) and Spectral (spectral:oas) must find no error and no warning,
# and a TypeScript client generated from it with openapi-typescript must type-check
# (tsc --strict) and run a first integration (flow.ts) against the server; then a
# Python client generated with openapi-python-client runs the same flow and more
# (flow.py). Loopback
# only; the server runs over a throw-away database with the demo catalog. The tools
# are end2end's npm packages, pinned in end2end/package-lock.json, and PyPI's, pinned in
# python-requirements.txt.
#
#   end2end/api-client/run.sh            (make test-api runs it)
#
# Environment: SERVER_BIN (default target/release/server), API_CLIENT_ADDR (default
# 127.0.0.1:3013), PYCLIENT_VENV (the generator's venv, which make test-api installs).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
server_bin="${SERVER_BIN:-$root/target/release/server}"
addr="${API_CLIENT_ADDR:-127.0.0.1:3013}"
bin="$root/end2end/node_modules/.bin"
out="$root/target/api-client"
mkdir -p "$out"
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
log="$out/server.log"
source "$root/end2end/start-server.sh"
curl -fsS "http://$addr/api/v1/openapi.json" -o "$out/openapi.json"

echo "--- redocly lint (recommended)"
# Redocly fails on errors only; warnings are counted in its JSON report, and none is allowed.
"$bin/redocly" lint "$out/openapi.json" --config "$here/redocly.yaml" --format json >"$out/redocly.json" \
  || { cat "$out/redocly.json"; exit 1; }
node -e 'const r = require(process.argv[1]); console.log(JSON.stringify(r.totals));
  if (r.totals.errors + r.totals.warnings > 0) { console.log(JSON.stringify(r.problems, null, 1)); process.exit(1); }' \
  "$out/redocly.json"

echo "--- spectral lint (spectral:oas)"
"$bin/spectral" lint "$out/openapi.json" --ruleset "$here/.spectral.yaml" --fail-severity warn

echo "--- openapi-typescript, tsc --strict, and the flow"
mkdir -p "$here/generated"
"$bin/openapi-typescript" "$out/openapi.json" --output "$here/generated/petstore.ts"
"$bin/tsc" -p "$here/tsconfig.json"
# The compiled flow imports openapi-fetch from end2end's node_modules.
cp "$here/package.json" "$out/js/package.json"
NODE_PATH="$root/end2end/node_modules" PETSTORE_API="http://$addr/api/v1" node "$out/js/flow.js"

echo "--- openapi-python-client, and the flow in Python"
# The pinned generator's venv (make python-client); the client is generated afresh,
# from the document as it is (no configuration). Its only warnings may be the photo's
# image types, which it sends as application/octet-stream, the type listed beside them.
pyclient="${PYCLIENT_VENV:?the venv of end2end/api-client/python-requirements.txt}"
rm -rf "$out/python" && mkdir -p "$out/python"
generated="$out/python/generate.log"
PATH="$pyclient/bin:$PATH" openapi-python-client generate --path "$out/openapi.json" \
  --output-path "$out/python/petstore_client" --meta none >"$generated" 2>&1 || { cat "$generated"; exit 1; }
if grep -Eiq "not be generated|cannot parse" "$generated" \
   || grep -i "warning parsing" "$generated" | grep -vq "PUT /pets/{petId}/photo"; then
  cat "$generated"; exit 1
fi
PYTHONPATH="$out/python" PETSTORE_API="http://$addr/api/v1" PETSTORE_ADMIN_KEY="$admin_key" \
  "$pyclient/bin/python" "$here/flow.py"
