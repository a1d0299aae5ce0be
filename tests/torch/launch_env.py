"""Start N copies of a command on this host the way torchrun would, and wait.

    launch_env.py -n N [--timeout SEC] [--tag-output] [--] command [args...]

Debian's torch 1.13 has no working torch.distributed.run on Python 3.11, so
the torch tests and benchmark start their ranks with this instead. Each copy
gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK=0, ROLE_RANK,
ROLE_WORLD_SIZE, MASTER_ADDR=127.0.0.1 and MASTER_PORT (a free port, picked
once for the job): the environment torchrun gives its workers. There is no
agent: rank 0's init_process_group serves the TCPStore on MASTER_PORT itself
(torchrun's agent would serve it and set TORCHELASTIC_USE_AGENT_STORE, which
is left unset here). xc_init reads the same variables as "torchrun".

Exit status: 0 when every copy exits 0. The first copy to exit non-zero
stops the others (SIGTERM, then SIGKILL after 5 s), and its status is the
launcher's, so 77 (meson's "skipped") from a rank that skips passes through;
a copy killed by a signal gives 128 + the signal. --timeout: past it, every
copy is stopped and the status is 124.

Also usable from Python: run(n, argv, timeout=None, tag_output=False, env=None).
"""

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time

GRACE_S = 5.0


def free_port(host="127.0.0.1"):
    """A TCP port nothing listens on now (the kernel's choice of an ephemeral
    port; another process could take it before rank 0 binds it, as with
    torchrun's own choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def rank_env(rank, n, port, base=None):
    env = dict(os.environ if base is None else base)
    env.update({
        "RANK": str(rank),
        "WORLD_SIZE": str(n),
        "LOCAL_RANK": str(rank),
        "LOCAL_WORLD_SIZE": str(n),
        "GROUP_RANK": "0",
        "ROLE_RANK": str(rank),
        "ROLE_WORLD_SIZE": str(n),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
    })
    return env


def _pump(stream, prefix, out):
    for line in iter(stream.readline, b""):
        out.write(prefix + line)
        out.flush()
    stream.close()


def _stop(procs):
    for p in procs:
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + GRACE_S
    for p in procs:
        try:
            p.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _status(code):
    return 128 - code if code < 0 else code  # Popen: -N when killed by signal N


def run(n, argv, timeout=None, tag_output=False, env=None, log=sys.stderr):
    """Start argv n times with torchrun's variables; return the job's exit
    status as described in the module doc."""
    if n < 1:
        raise ValueError("n must be at least 1")
    port = free_port()
    procs, pumps = [], []
    out = getattr(sys.stdout, "buffer", sys.stdout)
    try:
        for r in range(n):
            kw = {}
            if tag_output:
                kw = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
            p = subprocess.Popen(argv, env=rank_env(r, n, port, env), **kw)
            procs.append(p)
            if tag_output:
                t = threading.Thread(target=_pump, args=(p.stdout, b"[%d] " % r, out), daemon=True)
                t.start()
                pumps.append(t)
        start = time.monotonic()
        first_bad = None
        while True:
            running = [p for p in procs if p.poll() is None]
            for r, p in enumerate(procs):
                if p.returncode not in (None, 0) and first_bad is None:
                    first_bad = (r, p.returncode)
            if first_bad is not None or not running:
                break
            if timeout is not None and time.monotonic() - start > timeout:
                print("launch_env: timeout after %g s; stopping %d of %d ranks" % (timeout, len(running), n),
                      file=log)
                _stop(procs)
                return 124
            time.sleep(0.02)
        if first_bad is not None:
            r, code = first_bad
            if any(p.poll() is None for p in procs):
                print("launch_env: rank %d exited with %d; stopping the others" % (r, _status(code)), file=log)
            _stop(procs)
            return _status(code)
        return 0
    finally:
        _stop(procs)
        for t in pumps:
            t.join(1.0)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--nproc", type=int, required=True, help="number of ranks")
    ap.add_argument("--timeout", type=float, default=None, help="seconds; then stop all, exit 124")
    ap.add_argument("--tag-output", action="store_true", help="prefix every output line with [rank]")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no command")
    return run(a.nproc, cmd, timeout=a.timeout, tag_output=a.tag_output)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
