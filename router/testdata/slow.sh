#!/bin/sh
# Test responder that never answers: it starts a grandchild that holds
# stdout open, writes the grandchild's pid to $1, and sleeps.
sleep 30 &
echo "$!" >"$1"
sleep 30
