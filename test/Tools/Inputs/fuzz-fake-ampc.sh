#!/bin/sh
# A stand-in for ampc that fuzz.test uses to show the driver flags findings:
# it segfaults on a file without "tensor", hangs on one without "graph.",
# and otherwise fails with a located error.
grep -q tensor "$2" || kill -SEGV $$
grep -q 'graph\.' "$2" || exec sleep 30
echo "$2:1:1: error: fake" >&2
exit 1
