"""A team brain on PostgreSQL against the embedded store, and failover between two front ends.

    python bench/bench_team.py [--pages 2000] [--facts 10000] [--calls 200] [--load-s 20] [--failover-s 30]

In a private BRAIN_HOME, on a generated vault (bench/corpus.py) with its facts
log, and a PostgreSQL from the `postgres` extra (fsync on):

1. cold load: `brain index --store URL --keyword-only` (pages/s, chunks, facts
   adopted with their ids);
2. one front end each, the same verbs over the same HTTP transport, calls
   interleaved: the embedded daemon behind `brain serve --http` against
   `brain serve --http --store URL` — p50 / p99 of every read verb and of remember;
3. two front ends on the one store under 10 clients for `--load-s`: calls/s, and
   CPU per call of the front ends and of PostgreSQL;
4. failover: 4 writers remember through either front end (a failed call is sent
   again, with the same idempotency key, to the other one) while one front end
   is killed with SIGKILL every 3 s and started again: acknowledged facts lost,
   calls the surviving front end failed, and how soon a restarted one answers.

Keyword-only on both sides (the model's cost is the same for both stores and is
measured by bench/bench_model_cost.py). Prints one JSON line per figure.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import generate  # noqa: E402
from team_client import BRAIN, McpHttp, start_serve, wait_answering  # noqa: E402

from brain.daemon.server.usage_stats import percentile as pct  # noqa: E402

TARGETS = {"acked_lost": 0, "survivor_failed_calls": 0, "kill_to_answer_s": 5.0}


def emit(**kw) -> None:
    kw["loadavg"] = round(os.getloadavg()[0], 2)
    print(json.dumps(kw), flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pids: list[int]) -> float:
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def postgres_pids(root: Path) -> list[int]:
    """The bench's server: its postmaster (data/postmaster.pid) and every process it started."""
    try:
        master = int((root / "data" / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return []
    out = [master]
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                status = (d / "status").read_text()
            except OSError:
                continue
            ppid = next((line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), "0")
            if int(ppid) == master:
                out.append(int(d.name))
    return out


def read_calls(summary: dict) -> list[tuple[str, dict]]:
    people = summary["people"]
    return [
        ("recall(query)", {"query": f"{people[3]} project status", "limit": 10}),
        ("recall(entity)", {"entity": people[1]}),
        ("entity", {"name": people[2]}),
        ("context_pack", {"entities": people[4], "budget_tokens": 800}),
        ("delta", {"session_id": "bench-team", "since": "2026-01-01"}),
    ]


def latency(targets: dict[str, McpHttp], summary: dict, calls: int) -> None:
    """Each verb through each target, interleaved call by call."""
    verbs = read_calls(summary)
    counter = itertools.count()
    for label, args in verbs + [("remember", None)]:
        lat: dict[str, list[float]] = {name: [] for name in targets}
        for i in range(calls + 10):
            for name, client in targets.items():
                if label == "remember":
                    name_ = label
                    a = {"fact": f"bench fact {next(counter)} about the ledger migration", "provenance": "bench",
                         "entity": summary["people"][i % 20]}
                else:
                    name_, a = label.split("(")[0], args
                t0 = time.perf_counter()
                try:
                    body, err = client.call(name_, a)
                except OSError as e:
                    raise RuntimeError(f"{label} through the {name} front end failed after "
                                       f"{time.perf_counter() - t0:.1f} s: {e}") from None
                if i >= 10:
                    lat[name].append((time.perf_counter() - t0) * 1000)
                assert not err, (label, name, body)
        emit(verb=label, **{f"{n}_p50_ms": round(pct(v, 50), 2) for n, v in lat.items()},
             **{f"{n}_p99_ms": round(pct(v, 99), 2) for n, v in lat.items()},
             ratio_p50=round(pct(lat["postgres"], 50) / max(pct(lat["embedded"], 50), 1e-6), 2))


def load(urls: list[str], token: str, summary: dict, seconds: float, pg_root: Path, procs: list) -> None:
    """10 clients, half on each front end, the read verbs in turn, for `seconds`."""
    verbs = read_calls(summary)
    done, failed = [0], [0]
    stop = threading.Event()
    lock = threading.Lock()

    def client(n: int) -> None:
        c = McpHttp(urls[n % len(urls)], token)
        for name, args in itertools.cycle(verbs):
            if stop.is_set():
                break
            try:
                c.call(name.split("(")[0], args)
                with lock:
                    done[0] += 1
            except OSError:
                with lock:
                    failed[0] += 1
        c.close()

    fe_pids = [p.pid for p in procs]
    cpu_fe, cpu_pg = cpu_seconds(fe_pids), cpu_seconds(postgres_pids(pg_root))
    threads = [threading.Thread(target=client, args=(n,)) for n in range(10)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    fe = cpu_seconds(fe_pids) - cpu_fe
    pg = cpu_seconds(postgres_pids(pg_root)) - cpu_pg
    emit(load="2 front ends, 10 clients", calls=done[0], failed=failed[0], calls_per_s=round(done[0] / wall, 1),
         front_end_cpu_ms_per_call=round(fe * 1000 / max(done[0], 1), 2),
         postgres_cpu_ms_per_call=round(pg * 1000 / max(done[0], 1), 2), cores=os.cpu_count())


def failover(env: dict, store: str, token: str, summary: dict, seconds: float, dsn: str) -> None:
    ports = [free_port(), free_port()]
    procs = [start_serve(env, "--store", store, "--port", str(p))[0] for p in ports]
    # start_serve passes --port 0 first; the later --port wins (argparse keeps the last)
    urls = [f"http://127.0.0.1:{p}/mcp" for p in ports]
    for u in urls:
        wait_answering(u, token)
    acked: dict[int, str] = {}
    survivor_failed, retries, restarts = [0], [0], []
    victim = [None]   # the index of the front end being killed right now
    lock = threading.Lock()
    stop = threading.Event()

    def writer(w: int) -> None:
        clients = [McpHttp(u, token, timeout=10) for u in urls]
        for n in itertools.count():
            if stop.is_set():
                break
            text = f"failover writer {w} fact {n}: the ledger replica {n % 7} caught up"
            key = f"failover-{w}-{n}"
            first = (w + n) % 2
            for attempt in range(200):
                i = (first + attempt) % 2
                try:
                    body, err = clients[i].call("remember", {"fact": text, "provenance": "bench",
                                                             "entity": summary["people"][w]}, key=key)
                    assert not err, body
                    with lock:
                        acked[int(body["id"])] = text
                    break
                except OSError:
                    with lock:
                        retries[0] += 1
                        if victim[0] is not None and i != victim[0]:
                            survivor_failed[0] += 1
                    time.sleep(0.02)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    k = 0
    while time.monotonic() - t0 < seconds:
        time.sleep(3)
        i = k % 2
        k += 1
        with lock:
            victim[0] = i
        killed_at = time.monotonic()
        os.kill(procs[i].pid, signal.SIGKILL)
        procs[i].wait()
        procs[i] = start_serve(env, "--store", store, "--port", str(ports[i]))[0]
        wait_answering(urls[i], token)
        restarts.append(time.monotonic() - killed_at)   # from the kill to the restarted one's first answer
        with lock:
            victim[0] = None
    stop.set()
    for t in threads:
        t.join()
    import psycopg

    with psycopg.connect(dsn) as conn:
        rows = dict(conn.execute("SELECT id, fact FROM facts WHERE id = ANY(%s)", (list(acked),)).fetchall())
    lost = [fid for fid, text in acked.items() if rows.get(fid) != text]
    emit(failover_s=round(seconds, 1), kills=k, acked=len(acked), acked_lost=len(lost), retried_calls=retries[0],
         survivor_failed_calls=survivor_failed[0], kill_to_answer_s_p50=round(pct(restarts, 50), 2),
         kill_to_answer_s_max=round(max(restarts), 2), targets=TARGETS)
    for p in procs:
        p.terminate()
        p.wait(10)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--facts", type=int, default=10000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--load-s", type=float, default=20)
    ap.add_argument("--failover-s", type=float, default=30)
    ap.add_argument("--only", choices=("latency", "load", "failover"), help="run one part only")
    ns = ap.parse_args()
    from brain.daemon import config as config_mod
    from brain.daemon.http.tokens import create_token
    from brain.daemon.places import Places
    from brain.daemon.postgres.local_server import LocalPostgres

    home = Path(tempfile.mkdtemp(prefix="bench-team-", dir="/tmp"))
    vault = home / "vault"
    summary = generate(vault, ns.pages, facts_ratio=ns.facts / ns.pages)
    env = dict(os.environ, BRAIN_HOME=str(home), BRAIN_VAULT=str(vault), HF_HUB_OFFLINE="1")
    places = Places.from_env({"BRAIN_HOME": str(home)})
    config_mod.save(places.config_file, {"vault": str(vault), "embeddings.enabled": False})
    procs: list = []
    with LocalPostgres(durable=True) as server:
        kv = dict(part.split("=", 1) for part in server.dsn.split())
        store = f"postgresql://{kv['user']}@/{kv['dbname']}?host={quote(kv['host'], safe='')}&port={kv['port']}"
        try:
            t0 = time.monotonic()
            out = subprocess.run([BRAIN, "index", "--store", store, "--keyword-only", "--json"], env=env,
                                 capture_output=True, text=True, timeout=3600)
            assert out.returncode == 0, out.stderr
            report = json.loads(out.stdout)
            wall = time.monotonic() - t0
            emit(cold_load="brain index --store", pages=summary["pages"], facts=summary["facts"],
                 seconds=round(wall, 2), pages_per_s=round(summary["pages"] / wall, 1),
                 facts_into_store=report.get("facts_into_store"))
            t0 = time.monotonic()
            emb = subprocess.run([BRAIN, "index", "--keyword-only", "--json"], env=env, capture_output=True,
                                 text=True, timeout=3600)
            assert emb.returncode == 0, emb.stderr
            emit(cold_load="brain index (embedded)", seconds=round(time.monotonic() - t0, 2))
            local_token = create_token(places, "bench", can_write=True)
            token = subprocess.run([BRAIN, "auth", "token", "create", "bench", "--write", "--store", store],
                                   env=env, capture_output=True, text=True, check=True).stdout.strip()
            embedded, url_e = start_serve(env)
            procs.append(embedded)
            front, url_p = start_serve(env, "--store", store)
            procs.append(front)
            wait_answering(url_e, local_token)
            wait_answering(url_p, token)
            latency({"embedded": McpHttp(url_e, local_token), "postgres": McpHttp(url_p, token)}, summary, ns.calls)
            second, url_q = start_serve(env, "--store", store)
            procs.append(second)
            wait_answering(url_q, token)
            load([url_p, url_q], token, summary, ns.load_s, Path(kv["host"]), [front, second])
            for p in procs[1:]:
                p.terminate()
                p.wait(10)
            failover(env, store, token, summary, ns.failover_s, server.dsn)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.terminate()
                    p.wait(10)
            subprocess.run([BRAIN, "daemon", "stop"], env=env, capture_output=True, timeout=30)
            shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
