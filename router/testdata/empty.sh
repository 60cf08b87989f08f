#!/bin/sh
# Test responder that answers with whitespace only.
cat >/dev/null
printf '  \n\t\n'
