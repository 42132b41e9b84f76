#!/usr/bin/env python3
"""Run a command and leave nothing of it behind (stdlib only, Linux): this process becomes
a child subreaper (PR_SET_CHILD_SUBREAPER), so whatever the command starts and abandons —
a server a client killed its wrapper of, say — is re-parented here, and killed when the
command has exited. Exit status: the command's.

    reap.py CMD ARGS…
"""

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def children() -> list[int]:
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid …: comm may hold spaces and parentheses.
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.append(int(entry))
    return found


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: reap.py CMD ARGS…", file=sys.stderr)
        return 2
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    proc = subprocess.Popen(sys.argv[1:])
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda n, _f: proc.send_signal(n))
    rc = proc.wait()
    # What is left was started by the command: ask it to go, then make it.
    for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 1.0)):
        left = children()
        if not left:
            break
        print(f"reap: {len(left)} process(es) left behind by {os.path.basename(sys.argv[1])}: "
              f"{'stopped' if sig == signal.SIGTERM else 'killed'}", file=sys.stderr)
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.time() + grace
        while time.time() < deadline and children():
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            time.sleep(0.05)
    while True:  # collect the rest
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
