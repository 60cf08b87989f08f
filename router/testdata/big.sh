#!/bin/sh
# Test responder with an oversized answer (2,000,000 bytes on stdout).
cat >/dev/null
head -c 2000000 /dev/zero | tr '\0' 'a'
