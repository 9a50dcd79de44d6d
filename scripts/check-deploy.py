#!/usr/bin/env python3
"""Checks deploy/ with each file's own tool (make lint), and that what it reads exists.

  check-deploy.py lint SERVER_BINARY
      systemd-analyze verify of deploy/systemd/petstore.service with its ExecStart
      pointed at SERVER_BINARY (any warning fails); promtool check rules, test rules
      and check config of deploy/prometheus/; every expression of the Grafana
      dashboard parsed by promtool (as a recording rule, Grafana's variables filled in).
  check-deploy.py metrics SCRAPE_FILE
      promtool check metrics of a /metrics scrape, and every metric the alert rules
      and the dashboard name is one the server exports.

PROMTOOL names promtool (default: on PATH).
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
PROMTOOL = os.environ.get("PROMTOOL", "promtool")


def run(*command, stdin=None):
    """Runs a command and returns what it said; fails with that when it exits non-zero.
    (systemd-analyze verify exits 0 on unknown keys: its caller fails on any output.)"""
    done = subprocess.run(command, input=stdin, capture_output=True, text=True)
    said = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        sys.exit(f"FAILED: {' '.join(map(str, command))}\n{said}")
    return said


def dashboard_exprs():
    dashboard = json.loads((DEPLOY / "grafana" / "petstore.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        if variable.get("type") == "query":
            exprs.append(re.sub(r"^label_values\((.*), *\w+\)$", r"\1", variable["query"]))
    return exprs


def grafana_to_promql(expr):
    """Grafana's variables as values Prometheus would see."""
    return expr.replace("$__rate_interval", "5m").replace("$job", "petstore").replace("$instance", ".*")


def rule_exprs():
    text = (DEPLOY / "prometheus" / "alerts.yml").read_text()
    # The rules' expressions: `expr:` one-liners and `expr: |` blocks.
    exprs, lines = [], text.splitlines()
    for n, line in enumerate(lines):
        found = re.match(r"^(\s*)expr:\s*(.*)$", line)
        if not found:
            continue
        if found.group(2) != "|":
            exprs.append(found.group(2))
            continue
        indent, block = len(found.group(1)), []
        for more in lines[n + 1:]:
            if more.strip() and len(more) - len(more.lstrip()) <= indent:
                break
            block.append(more.strip())
        exprs.append(" ".join(block))
    return exprs


def lint(binary):
    binary = Path(binary).resolve()
    if not os.access(binary, os.X_OK):
        sys.exit(f"no server binary at {binary} (make build-release)")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        unit = (DEPLOY / "systemd" / "petstore.service").read_text()
        assert "ExecStart=/opt/petstore/server" in unit, "the unit runs the bundle's binary"
        (scratch / "petstore.service").write_text(unit.replace("/opt/petstore/server", str(binary)))
        said = run("systemd-analyze", "verify", str(scratch / "petstore.service"))
        if said:
            sys.exit(f"FAILED: systemd-analyze verify of deploy/systemd/petstore.service said:\n{said}")
        print("deploy/systemd/petstore.service: systemd-analyze verify: clean")

        prometheus = DEPLOY / "prometheus"
        print(run(PROMTOOL, "check", "rules", str(prometheus / "alerts.yml")))
        print(run(PROMTOOL, "test", "rules", str(prometheus / "alerts.test.yml")))
        # check config wants the token file it names beside it.
        for name in ["prometheus.yml", "alerts.yml"]:
            (scratch / name).write_text((prometheus / name).read_text())
        (scratch / "petstore-token").write_text("0" * 64 + "\n")
        print(run(PROMTOOL, "check", "config", str(scratch / "prometheus.yml")))

        rules = {"groups": [{"name": "dashboard", "rules": [
            {"record": f"dashboard:expr_{n}", "expr": grafana_to_promql(expr)}
            for n, expr in enumerate(dashboard_exprs())]}]}
        (scratch / "dashboard-rules.yml").write_text(json.dumps(rules))
        run(PROMTOOL, "check", "rules", str(scratch / "dashboard-rules.yml"))
        print(f"deploy/grafana/petstore.json: {len(rules['groups'][0]['rules'])} expressions parse")


METRIC = re.compile(r"\b((?:petstore|http|process)_[a-z_]+)\b")

# Exported only in a setting the bundle's scrape does not use: checked against the
# operations guide's table of metrics instead.
ONLY_WITH = {"petstore_redis_seconds": "--redis-url", "petstore_redis_up": "--redis-url"}


def metrics(scrape_file):
    text = Path(scrape_file).read_text()
    print(run(PROMTOOL, "check", "metrics", stdin=text) or "promtool check metrics: clean")
    exported = set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    wanted = set()
    for expr in rule_exprs() + dashboard_exprs():
        for name in METRIC.findall(expr):
            wanted.add(re.sub(r"_(bucket|sum|count)$", "", name))
    guide = (ROOT / "docs" / "operations.md").read_text()
    missing = sorted(
        name for name in wanted
        if name not in exported and not (name in ONLY_WITH and f"`{name}`" in guide)
    )
    if missing:
        sys.exit(f"FAILED: the alert rules or the dashboard read metrics the server does not export: {missing}")
    print(f"the alert rules and the dashboard read {len(wanted)} metrics, all exported")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "lint":
        lint(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "metrics":
        metrics(sys.argv[2])
    else:
        sys.exit(__doc__)
