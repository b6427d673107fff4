#!/usr/bin/env bash
# Offline check of the Kubernetes manifests in deploy/kubernetes/ (no cluster,
# no API server): render the kustomization (kubectl kustomize, or a small
# Python stand-in where kubectl is missing) with a throwaway token.txt, then
#   - prove the validator refuses what it must (a Deployment with
#     replicas: "two", an unknown field, an unknown kind) and accepts the
#     same Deployment fixed, so this check cannot pass by validating nothing;
#   - validate every rendered document, strictly (unknown fields are
#     errors), against the OpenAPI schemas of several Kubernetes versions
#     bundled by kubernetes-validate (pip-installed into a temporary venv);
#   - assert what the deployment relies on: one coordinator in a StatefulSet
#     with a volume claim at /data, its readiness asking grpc.health.v1 on
#     50051 with the token and its liveness connecting to 50051, the token
#     from the generated Secret as a file named by KSWEEP_TOKEN_FILE in both
#     pods, worker CPU and memory requests and limits, grace periods longer
#     than the shutdowns they cover, and flags the ksweep source really has.
# Skipped, with the reason, only where python3 or kubernetes-validate cannot
# be had. KSWEEP_K8S_DIR checks another copy of the manifests (to see a
# broken one fail); KSWEEP_K8S_RENDER=python forces the Python renderer.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
say() { printf '[kubernetes-check %3ds] %s\n' "$(( $(date +%s) - started ))" "$*"; }

src=${KSWEEP_K8S_DIR:-deploy/kubernetes}
# Pinned, so the schemas checked against do not change under us; the
# versions must be ones it bundles (1.25 to 1.37).
validator='kubernetes-validate==1.37.0'
versions='1.29 1.33 1.37'

if ! command -v python3 >/dev/null 2>&1; then
    say "SKIPPED: no python3 to run kubernetes-validate"
    exit 0
fi
[ -f "$src/kustomization.yaml" ] || { say "FAILED: no $src/kustomization.yaml"; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say "installing $validator into a temporary venv"
py=
if python3 -m venv "$work/venv" >/dev/null 2>&1 && [ -x "$work/venv/bin/python" ]; then
    if "$work/venv/bin/python" -m pip install -q --disable-pip-version-check "$validator" >"$work/pip.log" 2>&1; then
        py=$work/venv/bin/python
    fi
elif python3 -m pip --version >/dev/null 2>&1; then
    # No venv module (Debian without python3-venv): a private target directory.
    if python3 -m pip install -q --disable-pip-version-check --target "$work/site" "$validator" \
        >"$work/pip.log" 2>&1; then
        export PYTHONPATH="$work/site"
        py=python3
    fi
fi
if [ -z "$py" ]; then
    tail -5 "$work/pip.log" 2>/dev/null | sed 's/^/    /' || true
    say "SKIPPED: cannot install $validator (no venv or pip, or PyPI unreachable)"
    exit 0
fi
say "$("$py" -m kubernetes_validate --version | sed 's/^/kubernetes-validate /')"

# A copy to render, with a throwaway token in place of the user's.
cp -r "$src" "$work/kustomize"
token="kubernetes-check-token-$$"
printf '%s\n' "$token" >"$work/kustomize/token.txt"

cat >"$work/check.py" <<'PY'
"""Renders (fallback), validates and asserts; see tests/kubernetes-check.sh."""
import base64
import copy
import os
import re
import sys

import yaml
import kubernetes_validate
from kubernetes_validate.utils import SchemaNotFoundError, ValidationError, all_versions

MODE, DIR, RENDERED, TOKEN, SRC = sys.argv[1:6]
VERSIONS = sys.argv[6].split()
failures = []


def out(msg):
    print(msg, flush=True)


def fail(msg):
    sys.exit("FAILED: " + msg)


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def render_fallback(kdir):
    """A stand-in for `kubectl kustomize` that knows only what
    kustomization.yaml uses: local resource files, a secretGenerator from
    files (no name hash: the manifests' references stay as written),
    labels (includeSelectors) and a namespace. Anything else is refused."""
    with open(os.path.join(kdir, "kustomization.yaml")) as f:
        k = yaml.safe_load(f)
    unknown = set(k) - {"apiVersion", "kind", "namespace", "labels", "resources", "secretGenerator"}
    if unknown:
        fail("the Python renderer (used where kubectl is missing) does not know %s: "
                 "teach render_fallback" % sorted(unknown))
    docs = []
    for gen in k.get("secretGenerator") or []:
        if set(gen) - {"name", "files"}:
            fail("the Python renderer knows only secretGenerator name and files: teach render_fallback")
        data = {}
        for entry in gen["files"]:
            key, _, path = entry.rpartition("=") if "=" in entry else (os.path.basename(entry), "", entry)
            with open(os.path.join(kdir, path), "rb") as f:
                data[key] = base64.b64encode(f.read()).decode()
        docs.append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": gen["name"]},
                     "type": "Opaque", "data": data})
    for res in k["resources"]:
        docs.extend(load(os.path.join(kdir, res)))
    for entry in k.get("labels") or []:
        if set(entry) - {"pairs", "includeSelectors"}:
            fail("the Python renderer knows only labels pairs and includeSelectors: teach render_fallback")
        pairs = entry["pairs"]
        for d in docs:
            d["metadata"].setdefault("labels", {}).update(pairs)
            if not entry.get("includeSelectors"):
                continue
            spec = d.get("spec") or {}
            if d["kind"] == "Service":
                spec.setdefault("selector", {}).update(pairs)
            if "selector" in spec and d["kind"] != "Service":
                spec["selector"].setdefault("matchLabels", {}).update(pairs)
            if "template" in spec:
                spec["template"].setdefault("metadata", {}).setdefault("labels", {}).update(pairs)
            for claim in spec.get("volumeClaimTemplates") or []:
                claim.setdefault("metadata", {}).setdefault("labels", {}).update(pairs)
            if d["kind"] == "NetworkPolicy":
                # kustomize edits every podSelector's matchLabels (not its
                # matchExpressions): the policy's own and its peers'.
                peers = [p for r in spec.get("ingress") or [] for p in r.get("from") or []]
                peers += [p for r in spec.get("egress") or [] for p in r.get("to") or []]
                for sel in [spec.get("podSelector")] + [p.get("podSelector") for p in peers]:
                    if sel and "matchLabels" in sel:
                        sel["matchLabels"].update(pairs)
    if k.get("namespace"):
        for d in docs:
            d["metadata"]["namespace"] = k["namespace"]
    return docs


def validate(doc, version):
    """None when `doc` is valid for `version` (strict), else why not. An
    unknown kind is an error here (the CLI only warns about it)."""
    try:
        used = kubernetes_validate.validate(doc, version, strict=True)
    except ValidationError as e:
        return "%s: %s" % (".".join(str(p) for p in e.path) or "(top)", e.message)
    except SchemaNotFoundError as e:
        return e.message
    if used != version:
        return "validated against %s instead of %s" % (used, version)
    return None


def check(ok, what):
    if not ok:
        failures.append(what)


# --- render -------------------------------------------------------------
if MODE == "python":
    docs = render_fallback(DIR)
    with open(RENDERED, "w") as f:
        yaml.safe_dump_all(docs, f)
    out("rendered %d documents with the Python renderer (kubectl not used)" % len(docs))
else:
    docs = load(RENDERED)
    out("rendered %d documents with kubectl kustomize" % len(docs))
    # The stand-in must render the same documents (the Secret's hash aside),
    # or it would check something else where kubectl is missing.
    secret_names = {d["metadata"]["name"] for d in docs if d["kind"] == "Secret"}
    def plain(ds):
        text = yaml.safe_dump_all(sorted(ds, key=lambda d: (d["kind"], d["metadata"]["name"])))
        for name in secret_names:
            text = text.replace(name, re.sub(r"-[a-z0-9]{10}$", "", name))
        return text
    check(plain(render_fallback(DIR)) == plain(docs),
          "the Python renderer's output differs from kubectl kustomize's: update render_fallback")

# --- the validator refuses what it must ----------------------------------
bad = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "broken"},
    "spec": {"replicas": "two", "selector": {"matchLabels": {"a": "b"}},
             "template": {"metadata": {"labels": {"a": "b"}},
                          "spec": {"containers": [{"name": "c", "image": "i"}]}}},
}
fixed = copy.deepcopy(bad)
fixed["spec"]["replicas"] = 2
unknown_field = copy.deepcopy(fixed)
unknown_field["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Never"
unknown_kind = copy.deepcopy(fixed)
unknown_kind["kind"] = "Deploymnet"
for version in VERSIONS:
    if version + ".0" not in all_versions():
        fail("kubernetes-validate bundles no schemas of Kubernetes %s (it has %s)"
                 % (version, ", ".join(sorted(set(all_versions())))))
    for name, doc in [("replicas: \"two\"", bad), ("an unknown field", unknown_field),
                      ("an unknown kind", unknown_kind)]:
        if validate(doc, version) is None:
            fail("self-test: the validator accepted a Deployment with %s for %s; "
                     "this check would prove nothing" % (name, version))
    if validate(fixed, version) is not None:
        fail("self-test: the validator refused a valid Deployment for %s: %s"
                 % (version, validate(fixed, version)))
out("self-test: the validator refuses replicas: \"two\", an unknown field and an unknown kind, "
    "and accepts the fixed Deployment (%s)" % ", ".join(VERSIONS))

# --- schemas --------------------------------------------------------------
for version in VERSIONS:
    for d in docs:
        why = validate(d, version)
        check(why is None, "%s/%s is not valid Kubernetes %s: %s"
              % (d["kind"], d["metadata"]["name"], version, why))
out("schemas: %d documents against Kubernetes %s, strict" % (len(docs), ", ".join(VERSIONS)))

# --- what the deployment relies on --------------------------------------
def one(kind):
    found = [d for d in docs if d["kind"] == kind]
    if len(found) != 1:
        fail("expected one %s, found %d" % (kind, len(found)))
    return found[0]


sts, dep, svc, secret = one("StatefulSet"), one("Deployment"), one("Service"), one("Secret")
pods = {"coordinator": sts["spec"]["template"], "worker": dep["spec"]["template"]}
containers = {}
for role, pod in pods.items():
    cs = pod["spec"]["containers"]
    check(len(cs) == 1, "%s: expected one container, found %d" % (role, len(cs)))
    containers[role] = cs[0]
co, wo = containers["coordinator"], containers["worker"]
co_args, wo_args = co.get("args") or [], wo.get("args") or []


def flag(args, name):
    return args[args.index(name) + 1] if name in args[:-1] else None


# The coordinator: a StatefulSet of one, its database on a claimed volume.
check(sts["spec"].get("replicas") == 1, "coordinator: StatefulSet replicas must be 1 (one SQLite writer)")
claims = {c["metadata"]["name"]: c for c in sts["spec"].get("volumeClaimTemplates") or []}
check(claims, "coordinator: no volumeClaimTemplates (its database would not outlive the pod)")
mounts = {m["mountPath"]: m["name"] for m in co.get("volumeMounts") or []}
check(mounts.get("/data") in claims, "coordinator: /data is not mounted from a volumeClaimTemplate")
for name, claim in claims.items():
    check(claim["spec"].get("resources", {}).get("requests", {}).get("storage"),
          "coordinator: claim %s requests no storage" % name)
db = flag(co_args, "--db") or ""
check(co_args[:1] == ["coordinator"], "coordinator: args do not start with the coordinator subcommand")
check(db.startswith("/data/"), "coordinator: --db %r is not on the /data volume" % db)
check(flag(co_args, "--listen") == "0.0.0.0:50051", "coordinator: --listen is not 0.0.0.0:50051")
http = flag(co_args, "--http") or ""
check(http.startswith("0.0.0.0:"), "coordinator: no --http 0.0.0.0:PORT (the dashboard)")
ports = {p["containerPort"]: p.get("name") for p in co.get("ports") or []}
check(50051 in ports, "coordinator: container port 50051 not declared")
http_port = int(http.rpartition(":")[2]) if http.rpartition(":")[2].isdigit() else None
check(http_port in ports, "coordinator: the dashboard's port %s is not declared" % http_port)

# Probes on 50051. Readiness asks grpc.health.v1 with the token (ksweep
# health): not the kubelet's native grpc probe, since the coordinator's
# health service is behind its token (coordinator/tests/service.rs) and
# that probe cannot send one. Liveness: the port accepts connections.
def port_of(p):
    return p if isinstance(p, int) else {v: k for k, v in ports.items()}.get(p)


probes = {kind: co.get(kind) for kind in ("startupProbe", "readinessProbe", "livenessProbe")}
for kind in ("readinessProbe", "livenessProbe"):
    check(probes[kind], "coordinator: no %s" % kind)
for kind, probe in probes.items():
    check(not probe or "grpc" not in probe, "coordinator: %s is a native grpc probe, which cannot send "
          "the token and would only ever see UNAUTHENTICATED" % kind)
ready = probes["readinessProbe"] or {}
cmd = (ready.get("exec") or {}).get("command") or []
check(cmd[:2] == ["/usr/local/bin/ksweep", "health"] and flag(cmd, "--coordinator") == "http://127.0.0.1:50051",
      "coordinator: readinessProbe does not run ksweep health against http://127.0.0.1:50051: %r" % cmd)
check(ready.get("timeoutSeconds", 1) >= 5, "coordinator: readinessProbe timeoutSeconds under ksweep's 5 s connect")
live = probes["livenessProbe"] or {}
check(port_of((live.get("tcpSocket") or {}).get("port")) == 50051,
      "coordinator: livenessProbe is not a connection to port 50051: %r" % live)

# The Service reaches the coordinator's gRPC and dashboard ports, and only it.
sel = svc["spec"].get("selector") or {}
matches = lambda pod: sel and all(pod["metadata"].get("labels", {}).get(k) == v for k, v in sel.items())
check(matches(pods["coordinator"]), "service: its selector does not match the coordinator's pods")
check(not matches(pods["worker"]), "service: its selector matches the workers' pods too")
check(sts["spec"].get("serviceName") == svc["metadata"]["name"], "coordinator: serviceName is not the Service")
svc_ports = {p["port"]: p.get("targetPort") for p in svc["spec"].get("ports") or []}
for port in (50051, http_port):
    target = svc_ports.get(port)
    check(target == port or (target is not None and ports.get(port) == target),
          "service: port %s does not reach the coordinator's port %s" % (port, port))
check(svc["spec"].get("type", "ClusterIP") == "ClusterIP", "service: not ClusterIP")

# Workers: pointed at the Service; CPU and memory requested and limited.
check(wo_args[:1] == ["worker"], "worker: args do not start with the worker subcommand")
url = "http://%s:50051" % svc["metadata"]["name"]
check(flag(wo_args, "--coordinator") == url, "worker: --coordinator is not %s" % url)
res = wo.get("resources") or {}
for part in ("requests", "limits"):
    for what in ("cpu", "memory"):
        check((res.get(part) or {}).get(what), "worker: no resources.%s.%s" % (part, what))

# The token: the generated Secret, as a file, named by KSWEEP_TOKEN_FILE.
check(base64.b64decode(secret.get("data", {}).get("token", "")).decode().strip() == TOKEN,
      "secret: its key 'token' does not hold token.txt's content")
for role, pod in pods.items():
    c = containers[role]
    env = {e["name"]: e for e in c.get("env") or []}
    check("KSWEEP_TOKEN" not in env and "--token" not in (c.get("args") or []),
          "%s: the token given in plain text (KSWEEP_TOKEN or --token)" % role)
    path = (env.get("KSWEEP_TOKEN_FILE") or {}).get("value")
    check(path, "%s: KSWEEP_TOKEN_FILE not set" % role)
    found = False
    for vol in pod["spec"].get("volumes") or []:
        s = vol.get("secret")
        if not s or s.get("secretName") != secret["metadata"]["name"]:
            continue
        for m in c.get("volumeMounts") or []:
            if m["name"] != vol["name"]:
                continue
            items = {i["key"]: i["path"] for i in s.get("items") or []} or {k: k for k in secret["data"]}
            if path and items.get("token") and os.path.join(m["mountPath"], items["token"]) == path:
                found = True
    check(found, "%s: KSWEEP_TOKEN_FILE (%s) is not the token key of Secret %s mounted as a file"
          % (role, path, secret["metadata"]["name"]))
    # Grace: the coordinator's shutdown takes up to 3 x 5 s (in-flight calls,
    # dashboard, last writes); the worker's 4 s of delivery and 2 s of goodbye.
    least = {"coordinator": 15, "worker": 6}[role]
    grace = pod["spec"].get("terminationGracePeriodSeconds")
    check(isinstance(grace, int) and grace > least,
          "%s: terminationGracePeriodSeconds %r is not set above its %d s shutdown" % (role, grace, least))
    check(c.get("image") == "knight-sweep:local" and c.get("imagePullPolicy") == "Never",
          "%s: not knight-sweep:local with imagePullPolicy Never" % role)

# Network policies: the coordinator's pods take gRPC from the workers (and
# its ports from labelled clients) and open nothing; the workers take
# nothing and reach only the coordinator's gRPC port and DNS.
policies = {d["metadata"]["name"]: d for d in docs if d["kind"] == "NetworkPolicy"}
def policy_for(role):
    found = [p for p in policies.values()
             if all(pods[role]["metadata"].get("labels", {}).get(k) == v
                    for k, v in (p["spec"].get("podSelector") or {}).get("matchLabels", {}).items())
             and (p["spec"].get("podSelector") or {}).get("matchLabels")]
    check(len(found) == 1, "%s: expected one NetworkPolicy selecting its pods, found %d" % (role, len(found)))
    return found[0]["spec"] if found else {}
def peers_match(peers, role):
    return any(all(pods[role]["metadata"].get("labels", {}).get(k) == v
                   for k, v in (peer.get("podSelector") or {}).get("matchLabels", {}).items())
               and (peer.get("podSelector") or {}).get("matchLabels") and "namespaceSelector" not in peer
               for peer in peers)
cp, wp = policy_for("coordinator"), policy_for("worker")
for role, p in (("coordinator", cp), ("worker", wp)):
    check(sorted(p.get("policyTypes") or []) == ["Egress", "Ingress"],
          "%s: its NetworkPolicy must govern both Ingress and Egress" % role)
check(cp.get("egress") == [], "coordinator: its NetworkPolicy allows egress (it opens no connection)")
check(wp.get("ingress") == [], "worker: its NetworkPolicy allows ingress (a worker serves nothing)")
rules = cp.get("ingress") or []
check(any(peers_match(r.get("from") or [], "worker") and [q.get("port") for q in r.get("ports") or []] == [50051]
          for r in rules), "coordinator: the workers are not let in on 50051 (and only it)")
for r in rules:
    check(r.get("from"), "coordinator: an ingress rule open to every source")
    check({q.get("port") for q in r.get("ports") or []} <= {50051, http_port} and r.get("ports"),
          "coordinator: an ingress rule on a port it does not serve: %r" % r.get("ports"))
out_rules = wp.get("egress") or []
check(any(peers_match(r.get("to") or [], "coordinator") and [q.get("port") for q in r.get("ports") or []] == [50051]
          for r in out_rules), "worker: no egress to the coordinator on 50051")
for r in out_rules:
    ports_ = {q.get("port") for q in r.get("ports") or []}
    check(r.get("to") and (ports_ == {50051} or ports_ == {53}),
          "worker: an egress rule beyond the coordinator's gRPC and DNS: %r" % r)

# No token committed: no Secret among the source manifests, token.txt ignored.
with open(os.path.join(DIR, "kustomization.yaml")) as f:
    resources = yaml.safe_load(f)["resources"]
for res_file in resources:
    for d in load(os.path.join(SRC, res_file)):
        check(d["kind"] != "Secret", "%s: a Secret in the manifests (the token belongs in token.txt)" % res_file)
ignore = os.path.join(SRC, ".gitignore")
check(os.path.exists(ignore) and "token.txt" in open(ignore).read().split(),
      "%s does not ignore token.txt" % ignore)

# Every flag and variable used is one ksweep has (a renamed flag would leave
# the manifests stale).
root = os.getcwd()
def source(*paths):
    return "".join(open(os.path.join(root, "cli/src", p)).read() for p in paths)
for args, files in ((co_args, ("cmd/coordinator.rs", "connect.rs")), (wo_args, ("cmd/worker.rs", "connect.rs"))):
    text = source(*files)
    for a in args:
        if a.startswith("--"):
            check(re.search(r"pub %s:" % a[2:].replace("-", "_"), text),
                  "%s: ksweep %s has no flag %s" % (files[0], args[0], a))
check('env = "KSWEEP_TOKEN_FILE"' in source("connect.rs"), "connect.rs: no KSWEEP_TOKEN_FILE")
check(os.path.exists(os.path.join(root, "cli/src/cmd/health.rs")), "no ksweep health command")

if failures:
    for f in failures:
        out("FAILED: " + f)
    sys.exit(1)
out("manifests: coordinator StatefulSet of 1 with a claim at /data, readiness by grpc.health.v1 and liveness on 50051; "
    "workers with CPU and memory requests and limits; token from the Secret via KSWEEP_TOKEN_FILE; "
    "network policies letting workers reach only the coordinator's gRPC port and DNS; "
    "grace periods coordinator %ss, worker %ss"
    % (pods["coordinator"]["spec"]["terminationGracePeriodSeconds"],
       pods["worker"]["spec"]["terminationGracePeriodSeconds"]))
PY

mode=python
if [ "${KSWEEP_K8S_RENDER:-}" != python ] && command -v kubectl >/dev/null 2>&1; then
    mode=kubectl
    if ! kubectl kustomize "$work/kustomize" >"$work/rendered.yaml" 2>"$work/kustomize.log"; then
        sed 's/^/    /' "$work/kustomize.log"
        say "FAILED: kubectl kustomize $src"
        exit 1
    fi
fi
"$py" "$work/check.py" "$mode" "$work/kustomize" "$work/rendered.yaml" "$token" "$src" "$versions" 2>&1 |
    while IFS= read -r line; do say "$line"; done
say "passed (Kubernetes $versions, rendered with $mode)"
