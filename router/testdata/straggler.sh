#!/bin/sh
# Test responder that answers and exits 0 but leaves a grandchild holding
# stdout open; it writes the grandchild's pid to $1.
cat >/dev/null
sleep 30 &
echo "$!" >"$1"
echo "answer despite a straggler"
