"""MariaDB as a benchmark peer: Debian's mariadb-server, initialized in a fresh temporary data
directory and started on loopback with a chosen InnoDB buffer pool; stopped and removed after."""

import os
import shutil
import socket
import subprocess
import tempfile
import time

from lib.proc import stop_server


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MariaDBServer:
    def __init__(self, buffer_pool="2G"):
        for tool in ("mariadb-install-db", "mariadbd"):
            if not shutil.which(tool):
                raise RuntimeError(f"{tool} not found: apt-get install mariadb-server")
        self.work = tempfile.mkdtemp(prefix="mariadb-bench-")
        data = os.path.join(self.work, "data")
        user = ["--user=root"] if os.geteuid() == 0 else []
        subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={data}",
                        "--auth-root-authentication-method=normal", *user],
                       check=True, capture_output=True)
        self.mysql_port = free_port()
        self.proc = subprocess.Popen(
            ["mariadbd", "--no-defaults", f"--datadir={data}", f"--port={self.mysql_port}",
             "--bind-address=127.0.0.1", f"--socket={os.path.join(self.work, 'sock')}",
             f"--innodb-buffer-pool-size={buffer_pool}", "--skip-log-bin",
             "--max-connections=1000", *user],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.mysql_port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError("mariadbd exited at startup")
                time.sleep(0.2)
        else:
            raise RuntimeError("mariadbd did not start")
        self.pid = self.proc.pid

    def stop(self):
        stop_server(self.proc, self.work)
