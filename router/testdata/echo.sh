#!/bin/sh
# Test responder: answers with what it was given (env, argv, cwd, stdin).
prompt=$(cat)
printf 'id=%s issue=%s from=%s to=%s round=%s\n' "$AGENTX_CLARIFICATION_ID" "$AGENTX_ISSUE" "$AGENTX_FROM" "$AGENTX_TO" "$AGENTX_ROUND"
printf 'agent=%s\n' "$AGENTX_AGENT"
printf 'base=%s\n' "$AGENTX_TEST_BASE"
printf 'pwd=%s\n' "$(pwd -P)"
printf 'args=%d\n' "$#"
for a in "$@"; do
	printf 'arg=[%s]\n' "$a"
done
printf 'prompt<<\n%s\n>>\n' "$prompt"
