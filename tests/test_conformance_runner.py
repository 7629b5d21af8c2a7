"""The conformance runner against small independent servers (conformance_fake_server.py).

An honest server certifies; a five-verb server certifies with exactly the
context_pack / delta rows skipped; each lying server fails with a detail
that names its lie.
"""

import functools
import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from brain.daemon.conformance import runner as cf
from brain.daemon.conformance.runner import certify, connect_stdio, load_cases, render_text

FAKE = str(Path(__file__).with_name("conformance_fake_server.py"))


def run_fake(*args, synthesize=False, cases=None):
    connect = functools.partial(connect_stdio, [sys.executable, FAKE, *args])
    return anyio.run(functools.partial(certify, connect, synthesize=synthesize, cases=cases))


def rows(report, status=None):
    return {r["name"]: r for r in report["results"] if status is None or r["status"] == status}


@pytest.fixture(scope="module")
def honest():
    return run_fake()


def test_honest_server_certifies_with_only_synthesize_skipped(honest):
    assert honest["ok"] is True and honest["failed"] == 0
    assert list(rows(honest, "skip")) == ["synthesize answers or says unavailable with a fix"]
    n_cases = len(load_cases())
    assert honest["passed"] + honest["skipped"] == n_cases + 10  # 7 verbs + 3 list checks
    assert honest["protocol_version"] == 1
    assert set(honest) == {"protocol_version", "results", "passed", "failed", "skipped", "informational", "ok"}
    assert honest["informational"] == 0
    assert all(set(r) == {"name", "verb", "status", "detail"} for r in honest["results"])


def test_rows_come_in_order_list_checks_first(honest):
    names = [r["name"] for r in honest["results"]]
    assert names[:7] == [f"tools/list advertises {v}" for v in
                         ("recall", "remember", "entity", "synthesize", "forget", "context_pack", "delta")]
    assert names[7] == "synthesize is marked expensive ([EXPENSIVE prefix)"
    assert names[10:] == [c["name"] for c in load_cases()]


def test_text_report_format(honest):
    text = render_text(honest, "fake", "run-abc")
    lines = text.splitlines()
    assert lines[0] == "MEMORY_VERBS v1 conformance — target: fake"
    assert "  ✓ tools/list advertises recall" in lines
    assert "  − synthesize answers or says unavailable with a fix — needs --synthesize (it costs money)" in lines
    assert lines[-2] == f"{honest['passed']} passed, 0 failed, 1 skipped" and lines[-1] == "CONFORMANT"


def test_five_verb_server_certifies_with_context_pack_and_delta_skipped():
    report = run_fake("--five", synthesize=True)
    assert report["ok"] is True and report["failed"] == 0
    skipped = rows(report, "skip")
    assert skipped and {r["verb"] for r in skipped.values()} == {"context_pack", "delta"}
    additive = [c["name"] for c in load_cases() if c.get("verb") in ("context_pack", "delta")]
    assert set(skipped) == set(additive) | {"tools/list advertises context_pack", "tools/list advertises delta"}
    assert rows(report)["synthesize answers or says unavailable with a fix"]["status"] == "pass"


LIES = [
    ("drop_status", "remember a fact about the run's entity", "status: missing (required)"),
    ("bad_status", "remember a fact about the run's entity",
     'status: "saved" is not one of inserted, duplicate, superseded'),
    ("numeric_fact_id", "recall by entity round-trips the remembered facts",
     "facts.0.fact_id: expected string, got integer"),
    ("null_optional", "recall with a query returns a results array", "search_degraded: expected string, got null"),
    ("jsonrpc_error", "remember without provenance is invalid_params",
     "transport: MCPError: Missing required parameter: provenance"),
    ("two_blocks", "entity miss is found:false with suggestions, not an error", "response not JSON: {"),
]


@pytest.mark.parametrize("lie,case,detail", LIES, ids=[x[0] for x in LIES])
def test_a_lying_server_fails_with_the_right_detail(lie, case, detail):
    report = run_fake("--lie", lie)
    assert report["ok"] is False
    row = rows(report)[case]
    assert row["status"] == "fail"
    assert detail in row["detail"]
    assert "\n" not in row["detail"]
    # the lie is the only reason anything failed: every failure mentions it or follows from it
    if lie in ("drop_status", "bad_status"):
        assert {r["verb"] for r in rows(report, "fail").values()} == {"remember"}
    if lie == "null_optional":
        assert all("search_degraded" in r["detail"] for r in rows(report, "fail").values())


def test_a_case_chained_on_a_lost_id_fails_as_the_protocol_says():
    # without the remember that saves fact2, forget is called with MISSING-ID-fact2
    cases = [c for c in load_cases() if c.get("saveAs", {}).get("key") != "fact2"]
    report = run_fake(cases=cases[:20])
    failed = rows(report, "fail")
    assert set(failed) == {"forget expires a fact", "forget again is idempotent (expired:false, reason null)"}
    assert "not_found" in failed["forget expires a fact"]["detail"]


def test_a_target_that_cannot_start_is_one_failed_connect_row():
    connect = functools.partial(connect_stdio, ["/nonexistent/brain-server"])
    report = anyio.run(functools.partial(certify, connect))
    assert report["ok"] is False and report["failed"] == 1 and report["passed"] == 0
    assert report["results"][0]["name"] == "connect"
    assert "could not connect" in report["results"][0]["detail"]


def test_a_server_that_dies_mid_run_fails_the_remaining_cases():
    # a "server" that answers initialize and tools/list, then exits
    script = (
        "import sys, json\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if 'id' not in m: continue\n"
        "    if m['method'] == 'initialize':\n"
        "        r = {'protocolVersion': m['params']['protocolVersion'], 'capabilities': {'tools': {}},"
        " 'serverInfo': {'name': 'dying', 'version': '0'}}\n"
        "    elif m['method'] == 'tools/list':\n"
        "        r = {'tools': []}\n"
        "    else:\n"
        "        sys.exit(0)\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
    )
    connect = functools.partial(connect_stdio, [sys.executable, "-c", script])
    report = anyio.run(functools.partial(certify, connect, cases=load_cases()[:3]))
    assert report["ok"] is False
    assert rows(report)["tools/list advertises recall"]["detail"] == "not advertised"
    assert rows(report)["synthesize is marked expensive ([EXPENSIVE prefix)"]["detail"] == "synthesize not advertised"
    case_rows = report["results"][10:]
    assert len(case_rows) == 3
    assert all(r["status"] == "fail" and r["detail"].startswith("transport:") for r in case_rows)


def test_cli_certifies_a_command_target_and_prints_json(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "brain.cli.entry", "protocol", "conformance",
         "--target", f"{sys.executable} {FAKE} --five", "--json"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True and report["failed"] == 0 and report["skipped"] > 0


def test_cli_exits_nonzero_and_says_not_conformant_for_a_liar():
    proc = subprocess.run(
        [sys.executable, "-m", "brain.cli.entry", "protocol", "conformance",
         "--target", f"{sys.executable} {FAKE} --lie bad_status"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-1] == "NOT CONFORMANT"
    assert f"target: {sys.executable} {FAKE} --lie bad_status" in proc.stdout.splitlines()[0]
    assert "✗ remember a fact about the run's entity — status:" in proc.stdout


def test_cli_help_says_only_marker_named_artifacts_are_written():
    proc = subprocess.run([sys.executable, "-m", "brain.cli.entry", "protocol", "conformance", "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    flat = " ".join(proc.stdout.split())
    assert "writes only artifacts named after its marker" in flat
    assert "--synthesize" in flat and "--target" in flat and "--token" in flat


def test_call_timeouts_are_bounded():
    assert 0 < cf.CALL_TIMEOUT_S <= 120 and cf.SYNTHESIZE_TIMEOUT_S >= cf.CALL_TIMEOUT_S


TTL_CASE = "a fact past its ttl is not recalled"


def test_a_case_beyond_the_protocol_is_informational_against_another_server():
    # the reference never expires a fact by its ttl on reads; the protocol allows that
    report = run_fake("--lie", "ttl_not_enforced")
    row = rows(report)[TTL_CASE]
    assert row["status"] == "info" and "not required by the protocol" in row["detail"]
    assert "EXPIRED-SENTINEL" in row["detail"]
    assert report["ok"] is True and report["failed"] == 0 and report["informational"] == 1
    text = render_text(report, "fake")
    assert f"  i {TTL_CASE} — not required by the protocol" in text
    assert "(1 informational: stricter than the protocol requires)" in text
    assert text.splitlines()[-1] == "CONFORMANT"


def test_our_own_server_is_held_to_the_stricter_cases():
    class Announced:
        class server_info:
            name = cf.OUR_SERVER_NAME

    class Other:
        class server_info:
            name = "fake-memory"

    from brain.daemon.server.mcp import SERVER_NAME

    assert cf.OUR_SERVER_NAME == SERVER_NAME
    assert cf._is_ours(Announced()) is True
    assert cf._is_ours(Other()) is False
    assert [c["name"] for c in load_cases() if c.get("beyondProtocol")] == [TTL_CASE]
