# SPDX-License-Identifier: GPL-2.0-only
"""dist/kubernetes/jtr-watch.yaml, the DaemonSet of jtr watch: every resource
valid against Kubernetes' own schemas (kubernetes-validate, strict: no property
it does not know), the ServiceMonitor against the Prometheus operator's CRD
schema, and the pod's command line, run here as the container would run it
(its ConfigMap's options, a CPU of this machine), serves the metrics."""
import json
import os
import subprocess
import sys
import time
import urllib.request

import jsonschema
import pytest
import yaml
from conftest import ROOT, free_port, need_tracing

MANIFEST = os.path.join(ROOT, "dist", "kubernetes", "jtr-watch.yaml")
VENV = os.path.dirname(os.path.dirname(sys.executable))
CRD = os.path.join(VENV, "share", "prometheus-operator", "servicemonitors-crd-v0.85.0.json")


def resources():
    with open(MANIFEST) as f:
        return {d["kind"]: d for d in yaml.safe_load_all(f) if d}


def test_every_resource_is_valid_kubernetes():
    p = subprocess.run([os.path.join(VENV, "bin", "kubernetes-validate"), "--strict", MANIFEST],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout + p.stderr
    for kind in ("namespace/jtr", "configmap/jtr-watch", "daemonset/jtr-watch",
                 "service/jtr-watch"):
        assert "passed for resource %s" % kind in out, out
    # the one kind it has no schema for is the operator's: checked below
    assert [ln for ln in out.splitlines() if "Couldn't find schema" in ln] == \
        [ln for ln in out.splitlines() if "kind ServiceMonitor" in ln], out


def test_the_service_monitor_is_valid_for_the_operator():
    if not os.path.exists(CRD):
        pytest.skip("the Prometheus operator's CRD is not in the venv (make deps takes it from "
                    "the Go module proxy; it did not download)")
    with open(CRD) as f:
        crd = json.load(f)
    (ver,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema = ver["schema"]["openAPIV3Schema"]
    sm = resources()["ServiceMonitor"]
    assert sm["apiVersion"] == "%s/v1" % crd["spec"]["group"]
    jsonschema.validate(sm, schema)
    # and one the schema refuses: it checks something
    bad = json.loads(json.dumps(sm))
    bad["spec"]["endpoints"][0]["interval"] = "15 seconds"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    # it scrapes the port the Service names, which is the container's
    svc, ds = resources()["Service"], resources()["DaemonSet"]
    port = sm["spec"]["endpoints"][0]["port"]
    assert port in [p["name"] for p in svc["spec"]["ports"]]
    assert port in [p["name"] for p in ds["spec"]["template"]["spec"]["containers"][0]["ports"]]
    assert sm["spec"]["selector"]["matchLabels"] == svc["spec"]["selector"] == \
        ds["spec"]["selector"]["matchLabels"] == ds["spec"]["template"]["metadata"]["labels"]


@pytest.mark.slow
def test_the_pods_command_serves_the_metrics(tmp_path):
    """The container's command and its ConfigMap's options, here: jtr watch with them
    (the port the pod declares replaced by a free one, a CPU of this machine with
    -c, as this machine isolates none) serves /metrics with jtr's families."""
    need_tracing()
    r = resources()
    (c,) = r["DaemonSet"]["spec"]["template"]["spec"]["containers"]
    assert c["command"] == ["/bin/sh", "-c"]
    cmd = c["args"][0]
    declared = c["ports"][0]["containerPort"]
    assert ":%d" % declared in cmd
    port = free_port()
    cmd = cmd.replace(":%d" % declared, "127.0.0.1:%d" % port)
    cmd = cmd.replace("jtr watch", "%s watch -d 6s -c %d" % (os.path.join(ROOT, "jtr"),
                                                              max(os.sched_getaffinity(0))))
    cmd = cmd.replace("/var/lib/jtr/watch", str(tmp_path / "watch"))
    env = dict(os.environ, **r["ConfigMap"]["data"])
    p = subprocess.Popen(["/bin/sh", "-c", cmd], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        text, end = "", time.monotonic() + 20
        while time.monotonic() < end and p.poll() is None:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2) as u:
                    text = u.read().decode()
                if "jtr_watch_interruptions_total" in text:
                    break
            except OSError:
                pass
            time.sleep(0.3)
        assert "jtr_watch_interruptions_total" in text, p.stderr.read() if p.poll() else text
        _, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert (tmp_path / "watch" / "watch.json").exists()
    # the ConfigMap's --dump-above reached it
    with open(tmp_path / "watch" / "watch.json") as f:
        assert json.load(f)["dump_above_ns"] == 200_000
