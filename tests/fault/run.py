#!/usr/bin/env python3
"""Fault injection for a Basalt cluster (#25): nothing acknowledged is lost when backends die.

Starts one `basalt frontend` and three `basalt backend`s (tables with replication_num = 3) on
free loopback ports, then for --rounds rounds kill -9's a random backend, keeps it down a
moment and restarts it on the same port and data directory (never more than one down at a
time), while a loader runs labelled Stream Loads and a reader runs queries. Afterwards, with
every backend back, it checks that every acknowledged label's rows are present exactly once,
that no load is partly visible, and that every query that answered answered correctly.

    python3 tests/fault/run.py --rounds 50                # target/debug/basalt
    python3 tests/fault/run.py --rounds 200 --basalt target/release/basalt --seed 7
    python3 tests/fault/run.py --rounds 10 --moves 3     # then add/decommission rounds

With --moves N it then runs N rounds of moving replicas: ALTER SYSTEM ADD BACKEND of a new
backend (waiting until tablet counts are even), then ALTER SYSTEM DECOMMISSION BACKEND of a
random other one (waiting until it has left the cluster), loads and queries still running.

Prints the figures (rounds, kills, loads acknowledged, rows lost, ...) and exits 1 when any
row was lost or duplicated, a load was partly visible or a query answered wrongly. Needs
python3 with PyMySQL. The CI runs a short round count (tests/e2e/backend_failures.rs).
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import base64

import pymysql

SECRET = "fault-runner-secret-0123456789"
TABLE = "fault.events"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_line(path, text, timeout, proc):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{path}: exited with {proc.returncode}")
        try:
            with open(path, errors="replace") as f:
                if text in f.read():
                    return
        except FileNotFoundError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{path}: no '{text}' within {timeout} s")


class Node:
    """One basalt process with its data directory and log."""

    def __init__(self, binary, args, data_dir, log, ready):
        self.binary, self.args, self.data_dir, self.log, self.ready = binary, args, data_dir, log, ready
        self.proc = None

    def start(self):
        env = dict(os.environ, BASALT_CLUSTER_SECRET=SECRET, BASALT_LOG="info")
        # A restart appends to the log; the ready line counted is the new one.
        with open(self.log, "a") as log:
            log.write("\n=== start ===\n")
        seen = open(self.log, errors="replace").read().count(self.ready)
        self.proc = subprocess.Popen(
            [self.binary, *self.args, "--data-dir", self.data_dir],
            env=env,
            stdout=open(self.log, "a"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.time() + 60
        while open(self.log, errors="replace").read().count(self.ready) <= seen:
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"{self.log}: did not start")
            time.sleep(0.05)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


class Cluster:
    def __init__(self, binary, workdir):
        self.workdir = workdir
        self.backend_ports = [free_port() for _ in range(3)]
        self.started_backends = 3
        self.mysql_port, self.http_port = free_port(), free_port()
        self.backends = [
            Node(binary, ["backend", "--port", str(p)], os.path.join(workdir, f"be{i}"),
                 os.path.join(workdir, f"be{i}.log"), "Basalt backend ready on")
            for i, p in enumerate(self.backend_ports)
        ]
        self.frontend = Node(
            binary,
            ["frontend", "--mysql-port", str(self.mysql_port), "--http-port", str(self.http_port),
             "--backends", ",".join(f"127.0.0.1:{p}" for p in self.backend_ports)],
            os.path.join(workdir, "fe"), os.path.join(workdir, "fe.log"), "Basalt ready")

    def start(self):
        for b in self.backends:
            b.start()
        self.frontend.start()

    def stop(self):
        for n in [self.frontend, *self.backends]:
            if n.alive():
                n.kill9()

    def connect(self):
        return pymysql.connect(host="127.0.0.1", port=self.mysql_port, user="root",
                               autocommit=True, connect_timeout=10, read_timeout=60)

    def add_backend(self, binary):
        """Starts one more backend; the caller adds it with ALTER SYSTEM ADD BACKEND."""
        port = free_port()
        i = self.started_backends
        self.started_backends += 1
        node = Node(binary, ["backend", "--port", str(port)], os.path.join(self.workdir, f"be{i}"),
                    os.path.join(self.workdir, f"be{i}.log"), "Basalt backend ready on")
        node.start()
        self.backends.append(node)
        self.backend_ports.append(port)
        return port

    def tablet_counts(self, conn):
        """SHOW BACKENDS: port -> (alive, decommissioned, TabletNum)."""
        with conn.cursor() as c:
            c.execute("SHOW BACKENDS")
            return {int(r[2]): (r[5] == "true", r[6] == "true", int(r[7])) for r in c.fetchall()}

    def backends_alive(self, conn):
        with conn.cursor() as c:
            c.execute("SHOW BACKENDS")
            return {int(r[2]): r[5] == "true" for r in c.fetchall()}

    def wait_all_alive(self, conn, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if all(self.backends_alive(conn).values()):
                return True
            time.sleep(0.2)
        return False

    def stream_load(self, label, body):
        """Runs one Stream Load; returns (acknowledged, status text)."""
        url = f"http://127.0.0.1:{self.http_port}/api/fault/events/_stream_load"
        request = urllib.request.Request(url, data=body.encode(), method="PUT")
        request.add_header("Authorization", "Basic " + base64.b64encode(b"root:").decode())
        request.add_header("label", label)
        request.add_header("column_separator", ",")
        request.add_header("Expect", "100-continue")
        try:
            with urllib.request.urlopen(request, timeout=60) as reply:
                answer = json.loads(reply.read().decode() or "{}")
        except urllib.error.HTTPError as e:
            try:
                answer = json.loads(e.read().decode() or "{}")
            except ValueError:
                return False, f"HTTP {e.code}"
        except (OSError, ValueError) as e:
            return None, f"no answer: {e}"
        status = answer.get("Status", "")
        if status == "Success":
            return True, status
        if status == "Label Already Exists":
            # A retry of a load whose answer was lost: it was committed before.
            return (answer.get("ExistingJobStatus", "FINISHED") == "FINISHED"), status
        return False, f"{status}: {answer.get('Message', '')}"


class Figures:
    def __init__(self):
        self.lock = threading.Lock()
        self.rounds = self.kills = 0
        self.adds = self.decommissions = 0
        self.move_seconds = []
        self.loads = self.acknowledged = self.load_failures = 0
        self.rows_acknowledged = 0
        self.queries = self.query_errors = self.wrong_answers = 0
        self.failure_samples = []
        self.acked = {}  # label -> rows
        self.unacked = {}  # label -> rows (failed or unknown outcome)

    def sample(self, text):
        with self.lock:
            if len(self.failure_samples) < 12:
                self.failure_samples.append(text[:300])


def loader(cluster, figures, stop, rng):
    n = 0
    while not stop.is_set():
        n += 1
        label = f"fault_{n}"
        rows = rng.randint(20, 400)
        body = "".join(f"{label},{seq},{seq * 7 + n}\n" for seq in range(rows))
        outcome = None
        for _attempt in range(3):
            acked, status = cluster.stream_load(label, body)
            if acked is not None:
                outcome = (acked, status)
                if acked or "Label Already Exists" not in status:
                    break
            time.sleep(0.2)
        with figures.lock:
            figures.loads += 1
            if outcome and outcome[0]:
                figures.acknowledged += 1
                figures.rows_acknowledged += rows
                figures.acked[label] = rows
            else:
                figures.load_failures += 1
                figures.unacked[label] = rows
        if not (outcome and outcome[0]) and figures.load_failures <= 3:
            figures.sample(f"load {label}: {outcome[1] if outcome else 'no answer'}")


def reader(cluster, figures, stop):
    conn = None
    while not stop.is_set():
        try:
            if conn is None:
                conn = cluster.connect()
            with figures.lock:
                floor = figures.rows_acknowledged
                acked = dict(figures.acked)
                sizes = {**figures.unacked, **figures.acked}
            with conn.cursor() as c:
                c.execute(f"SELECT label, COUNT(*), COUNT(DISTINCT seq) FROM {TABLE} GROUP BY label")
                seen = {r[0]: (int(r[1]), int(r[2])) for r in c.fetchall()}
                # A join (a shuffle across backends): each row meets exactly itself.
                c.execute(f"SELECT COUNT(*), COUNT(DISTINCT CONCAT(e.label, ':', e.seq)) FROM {TABLE} e "
                          f"JOIN {TABLE} f ON e.label = f.label AND e.seq = f.seq")
                joined, keys = (int(v) for v in c.fetchone())
            total = sum(count for count, _ in seen.values())
            wrong = []
            if total < floor:
                wrong.append(f"{total} rows visible, {floor} acknowledged before the query")
            for label, rows in acked.items():
                if seen.get(label, (0, 0)) != (rows, rows):
                    wrong.append(f"acknowledged {label}: {seen.get(label)} of {rows}")
            for label, (count, distinct) in seen.items():
                size = sizes.get(label)
                if count != distinct or (size is not None and count != size):
                    wrong.append(f"{label} partly visible or doubled: {count}/{distinct} of {size}")
            if joined != keys:
                wrong.append(f"self-join found {joined} pairs of {keys} rows")
            with figures.lock:
                figures.queries += 1
                figures.wrong_answers += bool(wrong)
            if wrong:
                figures.sample("wrong answer: " + "; ".join(wrong[:3]))
        except pymysql.MySQLError as e:
            with figures.lock:
                figures.query_errors += 1
            figures.sample(f"query: {e}")
            if isinstance(e, (pymysql.err.OperationalError, pymysql.err.InterfaceError)):
                try:
                    conn.close()
                except Exception:
                    pass
                conn = None
        time.sleep(0.05)


def move_round(cluster, conn, figures, rng, binary, timeout=180):
    """Adds a backend and waits until tablets are balanced onto it, then decommissions another
    one and waits until it has left the cluster (its replicas moved), then stops it."""
    def wait(what, done):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if done(cluster.tablet_counts(conn)):
                return True
            time.sleep(0.25)
        figures.sample(f"{what} not done within {timeout} s: {cluster.tablet_counts(conn)}")
        return False

    started = time.time()
    port = cluster.add_backend(binary)
    with conn.cursor() as c:
        c.execute(f'ALTER SYSTEM ADD BACKEND "127.0.0.1:{port}"')
    def balanced(counts):
        tablets = [n for _, _, n in counts.values()]
        return (port in counts and counts[port][2] > 0 and all(a for a, _, _ in counts.values())
                and max(tablets) - min(tablets) <= 1)
    if wait("rebalance onto the added backend", balanced):
        figures.adds += 1
        figures.move_seconds.append(time.time() - started)
    started = time.time()
    victim = rng.randrange(len(cluster.backends) - 1)
    victim_port = cluster.backend_ports[victim]
    with conn.cursor() as c:
        c.execute(f'ALTER SYSTEM DECOMMISSION BACKEND "127.0.0.1:{victim_port}"')
    if wait("decommission", lambda counts: victim_port not in counts):
        figures.decommissions += 1
        figures.move_seconds.append(time.time() - started)
        node = cluster.backends.pop(victim)
        cluster.backend_ports.pop(victim)
        node.kill9()


def final_check(cluster, figures):
    conn = cluster.connect()
    if not cluster.wait_all_alive(conn):
        figures.sample("not every backend came back alive")
    with conn.cursor() as c:
        c.execute(f"SELECT label, COUNT(*), COUNT(DISTINCT seq) FROM {TABLE} GROUP BY label")
        seen = {r[0]: (int(r[1]), int(r[2])) for r in c.fetchall()}
    lost = duplicated = partial = 0
    for label, rows in figures.acked.items():
        count, distinct = seen.get(label, (0, 0))
        lost += max(0, rows - distinct)
        duplicated += count - distinct
    for label, rows in figures.unacked.items():
        count, distinct = seen.get(label, (0, 0))
        duplicated += count - distinct
        if distinct not in (0, rows):
            partial += 1
    unknown = [label for label in seen if label not in figures.acked and label not in figures.unacked]
    return lost, duplicated, partial, unknown


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="kill/restart rounds")
    parser.add_argument("--basalt", default=os.path.join(os.path.dirname(__file__),
                                                         "../../target/debug/basalt"))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--up", type=float, nargs=2, default=(1.0, 3.0),
                        help="seconds all backends run between rounds (min max)")
    parser.add_argument("--down", type=float, nargs=2, default=(0.5, 3.0),
                        help="seconds a killed backend stays down (min max)")
    parser.add_argument("--moves", type=int, default=0,
                        help="rounds of ADD BACKEND (rebalance) then DECOMMISSION BACKEND of another, "
                             "after the kill rounds")
    parser.add_argument("--keep", action="store_true", help="keep the data directories and logs")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    workdir = tempfile.mkdtemp(prefix="basalt-fault-")
    cluster = Cluster(os.path.abspath(args.basalt), workdir)
    figures = Figures()
    started = time.time()
    ok = False
    try:
        cluster.start()
        conn = cluster.connect()
        with conn.cursor() as c:
            c.execute("CREATE DATABASE fault")
            c.execute(f"CREATE TABLE {TABLE} (label VARCHAR(64), seq INT, v BIGINT) "
                      "DUPLICATE KEY(label, seq) DISTRIBUTED BY HASH(seq) BUCKETS 6 "
                      "PROPERTIES ('replication_num' = '3')")
        stop = threading.Event()
        threads = [
            threading.Thread(target=loader, args=(cluster, figures, stop, random.Random(rng.random()))),
            threading.Thread(target=reader, args=(cluster, figures, stop)),
        ]
        for t in threads:
            t.start()
        for _ in range(args.rounds):
            time.sleep(rng.uniform(*args.up))
            victim = rng.randrange(len(cluster.backends))
            cluster.backends[victim].kill9()
            figures.kills += 1
            time.sleep(rng.uniform(*args.down))
            cluster.backends[victim].start()
            if not cluster.wait_all_alive(conn):
                figures.sample(f"backend {victim} not alive again within 20 s")
            figures.rounds += 1
        for _ in range(args.moves):
            move_round(cluster, conn, figures, rng, os.path.abspath(args.basalt))
        time.sleep(1)
        stop.set()
        for t in threads:
            t.join()
        lost, duplicated, partial, unknown = final_check(cluster, figures)
        ok = not (lost or duplicated or partial or unknown or figures.wrong_answers)
        print(f"seed {seed}: {figures.rounds} rounds in {time.time() - started:.0f} s, "
              f"{figures.kills} kills")
        print(f"loads: {figures.loads} run, {figures.acknowledged} acknowledged "
              f"({figures.rows_acknowledged} rows), {figures.load_failures} failed")
        print(f"rows lost: {lost}, rows duplicated: {duplicated}, unacknowledged loads partly "
              f"visible: {partial}, unknown labels: {len(unknown)}")
        if args.moves:
            longest = max(figures.move_seconds, default=0)
            print(f"moves: {figures.adds} of {args.moves} backends added and balanced, "
                  f"{figures.decommissions} of {args.moves} decommissioned, longest {longest:.0f} s")
            ok = ok and figures.adds == figures.decommissions == args.moves
        print(f"queries: {figures.queries} answered, {figures.wrong_answers} wrong, "
              f"{figures.query_errors} failed")
        for s in figures.failure_samples:
            print("  " + s)
    finally:
        cluster.stop()
        if args.keep or not ok:
            print(f"data and logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
