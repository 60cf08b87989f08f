#!/bin/sh
# Test notify command: saves its stdin to the file $1.
cat >"$1"
