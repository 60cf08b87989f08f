#!/usr/bin/env bash
# A short, real session with agentx in a throw-away workspace: a scripted
# architect answers through a responder, a product manager answers later by
# hand, and the ready gate follows along. Nothing outside a temp dir changes.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
  say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
  say() { printf '\n== %s\n' "$*"; }
fi
run() { printf '$ %s\n' "$*"; "$@"; }

(cd "$here" && go build -o "$tmp/bin/agentx" ./cmd/agentx)
export PATH="$tmp/bin:$PATH"
mkdir -p "$tmp/repo" && cd "$tmp/repo"

say "Set up a workspace"
run agentx init

say "Give the architect a responder: a script that answers from the prompt on stdin"
cat > architect.sh <<'SH'
#!/bin/sh
prompt=$(cat)
case "$prompt" in
  *pooling*) echo "Pool size from config per environment; 10 in dev, 50 in prod." ;;
  *) echo "Repository pattern: SQLite in dev, PostgreSQL in prod, one interface." ;;
esac
SH
chmod +x architect.sh
cat >> .agentx/config.toml <<'TOML'

[agents.architect]
command = ["./architect.sh"]
timeout = "30s"
TOML

say "The engineer asks the architect; the hub runs the responder"
run agentx clarify ask --issue 42 --from engineer --to architect --topic "Database adapter" \
  --question "ADR-42 says PostgreSQL but local dev uses SQLite. Dual adapter or migrate?"
run agentx clarify followup CLR-42-001 --from engineer --body "And connection pooling?"
run agentx clarify resolve CLR-42-001 --from engineer --body "Proceeding with the repository pattern."

say "The engineer asks the product manager, who has no responder: the issue is blocked"
run agentx clarify ask --issue 42 --from engineer --to product-manager --topic "Export format" \
  --question "CSV, JSON or both for the first release?"
run agentx state
run agentx ready --issue 42 || echo "(exit $?: blocked)"

say "The product manager answers later; the issue is ready again"
run agentx clarify answer CLR-42-002 --from product-manager --body "JSON only; CSV next quarter."
run agentx ready --issue 42

say "The whole record"
run agentx clarify show --issue 42
run agentx events

printf '\nThe files were in %s/repo/.agentx (removed now). Try it in your repository: agentx init\n' "$tmp"
