"""Server processes for benchmarks: measurements from /proc (CPU seconds, peak resident memory,
with a way to reset the peak so a phase can be measured on its own) and stopping a server."""

import os
import shutil
import subprocess


def cpu_seconds(pid="self"):
    """User + system CPU seconds of process `pid` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid="self"):
    """Peak resident memory (VmHWM) in MB since start or the last reset."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak_rss(pid="self"):
    """Makes VmHWM start again from the current resident size (Linux: clear_refs 5)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def stop_server(proc, work_dir):
    """Stops a server process (SIGTERM, then SIGKILL after 60 s) and removes its directory."""
    proc.terminate()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(work_dir, ignore_errors=True)
