#!/usr/bin/env python3
"""Start N ranks of a program the way torchrun does, without torchrun
(Debian's torch 1.13 torch.distributed.run does not start on Python 3.11):
each process gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
MASTER_ADDR=127.0.0.1 and MASTER_PORT (a port that was free at start).
For tests of other rendezvous, every rank also gets LAUNCH_PORTS (two more
free ports, comma-separated) and LAUNCH_TMPDIR (a directory the job shares,
removed at the end).

usage: launch.py -n N [--timeout SECONDS] [--may-die R,...] [--] program [args...]

Every line a rank prints is prefixed with "[rank] ". The first rank that
fails stops the job (the others get SIGTERM, then SIGKILL); ranks listed in
--may-die may end in any way (a test that kills a rank on purpose). Exit
status: 0 when every other rank exits 0, else the first failure's status
(128+N for signal N), 124 when the job outlives --timeout.
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def free_ports(n):
    """n distinct ports that are free now (held open together while picked)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def pump(rank, stream, out, lock):
    for line in iter(stream.readline, b""):
        with lock:
            out.write(b"[%d] " % rank + line if line.endswith(b"\n") else b"[%d] " % rank + line + b"\n")
            out.flush()
    stream.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--may-die", default="")
    ap.add_argument("program", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    prog = a.program[1:] if a.program[:1] == ["--"] else a.program
    if not prog or a.n < 1:
        ap.error("a program and -n N >= 1 are needed")
    may_die = {int(r) for r in a.may_die.split(",") if r}
    ports = free_ports(3)
    tmpdir = tempfile.mkdtemp(prefix="xcomm-launch-")
    procs, threads, lock = [], [], threading.Lock()
    for r in range(a.n):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(a.n), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(a.n),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(ports[0]),
                   LAUNCH_PORTS="%d,%d" % (ports[1], ports[2]), LAUNCH_TMPDIR=tmpdir)
        for v in ("XC_RANK", "XC_SIZE", "XC_LOCAL_RANK", "XC_LOCAL_SIZE", "XC_STORE_ADDR", "XC_STORE_FD"):
            env.pop(v, None)
        p = subprocess.Popen(prog, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             start_new_session=True)
        procs.append(p)
        t = threading.Thread(target=pump, args=(r, p.stdout, sys.stdout.buffer, lock), daemon=True)
        t.start()
        threads.append(t)
    end = time.monotonic() + a.timeout
    status = None
    while status is None:
        codes = [p.poll() for p in procs]
        bad = [(r, c) for r, c in enumerate(codes) if c not in (None, 0) and r not in may_die]
        if bad:
            r, c = bad[0]
            status = 128 - c if c < 0 else c
            print("launch.py: rank %d exited with %s; stopping the job" % (r, "signal %d" % -c if c < 0 else c),
                  flush=True)
        elif all(c is not None for c in codes):
            status = 0
        elif time.monotonic() > end:
            status = 124
            print("launch.py: timed out after %g s; stopping the job" % a.timeout, flush=True)
        else:
            time.sleep(0.05)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        live = [p for p in procs if p.poll() is None]
        for p in live:
            try:
                os.killpg(p.pid, sig)
            except ProcessLookupError:
                pass
        stop = time.monotonic() + 5
        while any(p.poll() is None for p in live) and time.monotonic() < stop:
            time.sleep(0.05)
    for t in threads:
        t.join(timeout=5)
    shutil.rmtree(tmpdir, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
