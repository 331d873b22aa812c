"""Reads `ampc compile --help` on stdin; prints each option of the "ampc
options" section that does not state its default, and exits 1 if any."""
import re
import sys

section, options, missing = False, 0, []
for line in sys.stdin:
    if line.startswith("ampc options:"):
        section = True
        continue
    m = re.match(r"\s+(-{1,2}[\w-]+)", line)
    if section and m:
        options += 1
        if "default" not in line:
            missing.append(m.group(1))
for name in missing:
    print("no default stated: " + name)
print("%d options, %d without a default" % (options, len(missing)))
sys.exit(1 if missing or options == 0 else 0)
