#!/bin/sh
# A server-side git "update" hook that protects agentx's shared ledgers:
# a ref under refs/agentx/ may be created and moved forward, never deleted
# nor moved to a commit that does not descend from the one it holds (no
# force push, no git push --mirror or --prune from a clone that lacks them).
# The queue's refs (refs/agentx/clarifications-queue/*: the waiters and
# intents hosts on a busy issue create and delete, and the intents' mark
# each intent moves) and other refs pass untouched.
#
# Install it in the bare repository the hosts push to, as hooks/update
# (chmod +x), or call it from your update hook with the same three
# arguments. To put a chain back after all (agentx sync --republish makes a
# commit that descends from both chains, so the hook lets it through), an
# administrator can set AGENTX_ALLOW_REWRITE=1 in the server's environment.
#
# git calls it as: update REFNAME OLD NEW (zeros for a ref created or deleted).
set -eu
ref=$1 old=$2 new=$3
case $ref in
refs/agentx/clarifications-queue/*) exit 0 ;;
refs/agentx/*) ;;
*) exit 0 ;;
esac
[ "${AGENTX_ALLOW_REWRITE:-}" = 1 ] && exit 0
zero=$(printf '%0*d' "${#old}" 0)
if [ "$new" = "$zero" ]; then
	echo "refused: $ref holds agentx's shared ledger: it is never deleted (did a git push --mirror or --prune come from a clone without refs/agentx/*?)" >&2
	exit 1
fi
if [ "$old" != "$zero" ] && ! git merge-base --is-ancestor "$old" "$new"; then
	echo "refused: $ref holds agentx's shared ledger: $new does not descend from $old (a force push from an older clone?)" >&2
	exit 1
fi
exit 0
