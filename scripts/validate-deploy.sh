#!/usr/bin/env bash
# `make validate-deploy`: checks the deployment files offline, with no Docker engine and no cluster.
#   1. docker-compose.yml against the Compose Specification's JSON schema (deploy/schema/compose-spec.json, vendored),
#      as written and as rendered with deploy/compose.env.example;
#   2. docker-compose.yml with Debian's docker-compose 1.29 (`docker-compose config`, the example as the env file);
#   3. `kubectl kustomize` of deploy/k8s/base and of every deploy/k8s/overlays/*, and the two example files kustomize
#      leaves out (secret.example.yaml, ingress.example.yaml), against the Kubernetes $KUBERNETES_VERSION schemas
#      (kubernetes-validate, strict: an unknown field is an error); an overlay's surge-config has the base's keys;
#   4. the observability profile: `promtool check config deploy/observability/prometheus.yml`, and
#      scripts/check-grafana-dashboard.py (every metric of the Grafana dashboard is one the code emits, every expression
#      parses).
# Every check runs; each failure is named with its file and the validator's words, and the script exits non-zero if any
# failed. Installs docker-compose, kubernetes-client, prometheus (for promtool) and python3-venv as root when missing;
# the validators live, pinned, in their own virtual environment under .surge/deploy-venv.
source "$(dirname "$0")/lib.sh"

CHECK_JSONSCHEMA_VERSION=0.39.0
KUBERNETES_VALIDATE_VERSION=1.37.0
# The Kubernetes API version the manifests must be valid for (kubernetes-validate ships 1.25 to 1.37).
KUBERNETES_VERSION=1.29.0
VENV="$STATE/deploy-venv"
OUT="$STATE/validate-deploy"
cd "$ROOT"

missing=()
command -v docker-compose >/dev/null || missing+=(docker-compose)
command -v kubectl >/dev/null || missing+=(kubernetes-client)
command -v promtool >/dev/null || missing+=(prometheus)
python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    log "Installing ${missing[*]}"
    apt-get update -qq
    # No recommends: docker-compose would bring the Docker engine, which `config` does not need (and prometheus its
    # exporters and web console).
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "Missing packages. Install them with:" >&2
    echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
fi

installed() { "$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null; }
if [ "$(installed check-jsonschema)" != "$CHECK_JSONSCHEMA_VERSION" ] || [ "$(installed kubernetes-validate)" != "$KUBERNETES_VALIDATE_VERSION" ]; then
  log "Installing check-jsonschema $CHECK_JSONSCHEMA_VERSION and kubernetes-validate $KUBERNETES_VALIDATE_VERSION into ${VENV#"$ROOT/"}"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check \
    "check-jsonschema==$CHECK_JSONSCHEMA_VERSION" "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
fi

rm -rf "$OUT"
mkdir -p "$OUT"
failures=()
# check NAME FILE COMMAND...: runs the command, shows its output when it fails, and records the failure.
check() {
  local name="$1" file="$2" output status=0
  shift 2
  output=$("$@" 2>&1) || status=$?
  if [ "$status" -eq 0 ]; then
    printf '  ok    %s (%s)\n' "$name" "$file" >&2
  else
    printf '\033[1;31m  FAIL  %s (%s)\033[0m\n' "$name" "$file" >&2
    printf '%s\n' "$output" | sed 's/^/        /' >&2
    failures+=("$file: $name")
  fi
}

log "docker-compose.yml"
check "Compose Specification schema (deploy/schema/compose-spec.json)" docker-compose.yml \
  "$VENV/bin/check-jsonschema" --schemafile deploy/schema/compose-spec.json docker-compose.yml
check "docker-compose $(docker-compose version --short 2>/dev/null) config, env from deploy/compose.env.example" docker-compose.yml \
  sh -c 'docker-compose --env-file deploy/compose.env.example -f docker-compose.yml config >"$1"' _ "$OUT/compose.rendered.yml"
if [ -s "$OUT/compose.rendered.yml" ]; then
  check "Compose Specification schema, after interpolation (${OUT#"$ROOT/"}/compose.rendered.yml)" docker-compose.yml \
    "$VENV/bin/check-jsonschema" --schemafile deploy/schema/compose-spec.json "$OUT/compose.rendered.yml"
fi

log "deploy/k8s: the base and every overlay (Kubernetes $KUBERNETES_VERSION schemas, strict)"
# kubernetes-validate names the resource (kind/name); say which manifest declares it.
k8s_validate() {
  local status=0 line resource file
  "$VENV/bin/kubernetes-validate" --strict --quiet -k "$KUBERNETES_VERSION" "$@" >"$OUT/k8s.out" 2>&1 || status=$?
  cat "$OUT/k8s.out"
  while read -r line; do
    resource=$(printf '%s' "$line" | sed -nE 's|.* for resource [a-z]+/([a-z0-9.-]+) .*|\1|p')
    [ -n "$resource" ] || continue
    file=$(grep -rlE "^  name: $resource\$" deploy/k8s --include='*.yaml' | head -n 1)
    [ -n "$file" ] && echo "  -> $resource is declared in $file"
  done < <(grep '^ERROR' "$OUT/k8s.out" || true)
  return "$status"
}
# An overlay may change surge-config's values, never its keys: the registry test (RegistryConsistencyTests) checks the
# services' environment against deploy/k8s/base/config.yaml only.
same_config_keys() {
  "$VENV/bin/python" - "$1" "$2" <<'PYTHON'
import sys, yaml
def keys(path):
    maps = [d for d in yaml.safe_load_all(open(path)) if d and d.get("kind") == "ConfigMap" and d["metadata"]["name"] == "surge-config"]
    return set(maps[0].get("data", {})) if maps else set()
base, overlay = keys(sys.argv[1]), keys(sys.argv[2])
if base != overlay:
    sys.exit(f"surge-config: keys only in the base {sorted(base - overlay)}, only in the overlay {sorted(overlay - base)}")
PYTHON
}
# The overlays use components and `patches:` (kustomize 3.7 and later). Debian bookworm's kubernetes-client is kubectl
# 1.20, whose kustomize (2.0.3) renders the base but not the overlays; kubectl 1.24 and later say their kustomize's
# version, and any of them will do.
kustomize_version=$(kubectl version --client 2>/dev/null | sed -nE 's/^Kustomize Version: v?([0-9]+)\..*/\1/p')
if [ -z "$kustomize_version" ] || [ "$kustomize_version" -lt 4 ]; then
  printf '  note  kubectl %s embeds a kustomize too old for the overlays (components): install kubectl 1.24 or later\n' \
    "$(kubectl version --client 2>/dev/null | head -n 1)" >&2
fi
for kustomization in deploy/k8s/base deploy/k8s/overlays/*/; do
  kustomization=${kustomization%/}
  [ -f "$kustomization/kustomization.yaml" ] || continue
  rendered="$OUT/k8s.$(basename "$kustomization").rendered.yaml"
  check "kubectl kustomize $kustomization" "$kustomization/kustomization.yaml" \
    sh -c 'kubectl kustomize "$1" >"$2"' _ "$kustomization" "$rendered"
  if [ -s "$rendered" ]; then
    check "the kustomize output (${rendered#"$ROOT/"})" "$kustomization" k8s_validate "$rendered"
    if [ "$kustomization" != deploy/k8s/base ] && [ -s "$OUT/k8s.base.rendered.yaml" ]; then
      check "surge-config has the base's keys" "$kustomization" same_config_keys "$OUT/k8s.base.rendered.yaml" "$rendered"
    fi
  fi
done
for example in deploy/k8s/secret.example.yaml deploy/k8s/ingress.example.yaml; do
  check "outside the kustomizations, validated alone" "$example" k8s_validate "$example"
done

log "deploy/observability (Prometheus and Grafana of the observability profile)"
check "promtool $(promtool --version 2>/dev/null | sed -nE 's/^promtool, version ([^ ]+).*/\1/p') check config" deploy/observability/prometheus.yml \
  promtool check config deploy/observability/prometheus.yml
check "every dashboard metric is emitted by the code; promtool check rules on every expr" deploy/observability/grafana/dashboards/surge.json \
  "$VENV/bin/python" scripts/check-grafana-dashboard.py --promtool "$(command -v promtool)"

if [ ${#failures[@]} -gt 0 ]; then
  printf '\033[1;31mvalidate-deploy: %d check(s) failed:\033[0m\n' "${#failures[@]}" >&2
  printf '  %s\n' "${failures[@]}" >&2
  exit 1
fi
log "validate-deploy: every deployment file is valid"
