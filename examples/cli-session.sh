#!/usr/bin/env bash
# The orgplane CLI in a shell script: start a throwaway server, sign up, create an organization, invite a colleague
# who joins with their own profile, and put them in a team. Run from anywhere: `examples/cli-session.sh`.
# Everything it touches is temporary: an in-memory server on a free port, and a profile folder that is removed.
set -euo pipefail
cd "$(dirname "$0")/.."

# The throwaway server and the profiles below, not whatever the calling shell points at.
unset DATABASE_URL ORGPLANE_TOKEN ORGPLANE_API_KEY ORGPLANE_PROFILE
# Profiles go to a folder of their own, so the script never touches ~/.config/orgplane.
ORGPLANE_CONFIG_DIR=$(mktemp -d)
export ORGPLANE_CONFIG_DIR
PORT=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')
export ORGPLANE_URL="http://127.0.0.1:$PORT"
export ORGPLANE_PASSWORD="a long password" # instead of a prompt

orgplane() { pnpm -s orgplane "$@"; }

# The server in its own process group (set -m), so stopping it stops the node process under pnpm too.
set -m
orgplane serve --data memory --port "$PORT" >"$ORGPLANE_CONFIG_DIR/server.log" 2>&1 &
server=$!
set +m
stop() {
  # SIGTERM: the server shuts down gracefully; wait until every process of its group has exited.
  kill -TERM -- "-$server" 2>/dev/null || true
  while kill -0 -- "-$server" 2>/dev/null; do sleep 0.1; done
  rm -rf "$ORGPLANE_CONFIG_DIR"
}
trap stop EXIT
for _ in $(seq 1 100); do
  node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$ORGPLANE_URL/health" && break
  kill -0 "$server" 2>/dev/null || { cat "$ORGPLANE_CONFIG_DIR/server.log"; exit 1; }
  sleep 0.2
done

echo "+ orgplane auth signup --email ada@example.com --name 'Ada Lovelace'"
orgplane auth signup --email ada@example.com --name "Ada Lovelace"
echo "+ orgplane orgs create Acme"
orgplane orgs create Acme

echo "+ orgplane invitations create grace@example.com --role admin --json"
invite=$(orgplane invitations create grace@example.com --role admin --json)
token=$(node -p 'JSON.parse(process.argv[1]).inviteToken' "$invite")
echo "+ orgplane invitations accept <token> --sign-up --name 'Grace Hopper' --profile grace"
orgplane invitations accept "$token" --sign-up --name "Grace Hopper" --profile grace

grace=$(orgplane members list --json | node -p 'JSON.parse(require("node:fs").readFileSync(0, "utf8")).items.find((m) => m.email === "grace@example.com").id')
echo "+ orgplane teams create Platform --member $grace"
orgplane teams create Platform --member "$grace"
echo "+ orgplane members list"
orgplane members list
echo "+ orgplane teams list --profile grace"
orgplane teams list --profile grace
