#!/usr/bin/env python3
"""Runs ampc-comm-fault MODE under mpirun and checks how the job ends.

usage: fault_test.py MPIEXEC PROGRAM MODE EXPECT_RC(zero|nonzero) REGEX
The job must end within 30 s (AMPC_COMM_TIMEOUT=5) and its output must match
REGEX (a Python regex searched in stdout+stderr).
"""
import os
import re
import subprocess
import sys
import time

mpiexec, program, mode, expect_rc, pattern = sys.argv[1:6]
env = dict(os.environ, AMPC_COMM_TIMEOUT="5")
cmd = [mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", "2", program, mode]
start = time.monotonic()
try:
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=60, text=True)
except subprocess.TimeoutExpired as e:
    print(e.output or "")
    sys.exit(f"FAIL: {mode}: the job hung (no exit within 60 s)")
elapsed = time.monotonic() - start
print(proc.stdout)
print(f"{mode}: rc={proc.returncode} in {elapsed:.1f} s")
if expect_rc == "zero" and proc.returncode != 0:
    sys.exit(f"FAIL: {mode}: expected exit 0, got {proc.returncode}")
if expect_rc == "nonzero" and proc.returncode == 0:
    sys.exit(f"FAIL: {mode}: expected a non-zero exit")
if elapsed > 30:
    sys.exit(f"FAIL: {mode}: took {elapsed:.1f} s (timeout is 5 s)")
if not re.search(pattern, proc.stdout):
    sys.exit(f"FAIL: {mode}: output does not match {pattern!r}")
print("PASS")
