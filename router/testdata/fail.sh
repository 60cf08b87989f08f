#!/bin/sh
# Test responder that fails: noise on stderr (optionally $1 lines of it),
# a last line naming the problem, exit 3.
cat >/dev/null
i=0
while [ "$i" -lt "${1:-0}" ]; do
	echo "noise line $i: the quick brown fox jumps over the lazy dog" >&2
	i=$((i + 1))
done
echo "partial answer on stdout"
echo "architect is confused: no design doc" >&2
exit 3
