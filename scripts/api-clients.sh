#!/usr/bin/env bash
# `make api-clients`: generates a Python client from docs/openapi.json with openapi-python-client, as an integrator
# would, and fails on any warning it prints or any model it had to invent a name for (an inline object or enum of the
# document, which becomes a `*_type_0`-style class): every schema a client gets is one the document names.
#
# Photos are bytes whatever their image type: the generator knows only application/octet-stream as bytes, so the
# config maps image/* to it, as an integrator's config would (content_type_overrides). Output in .surge/api-clients/.
source "$(dirname "$0")/lib.sh"

GENERATOR_VERSION=0.29.1
RUFF_VERSION=0.17.6
WORK="$STATE/api-clients"
VENV="$WORK/venv"
if [ ! -x "$VENV/bin/openapi-python-client" ] || ! "$VENV/bin/pip" show openapi-python-client 2>/dev/null | grep -qx "Version: $GENERATOR_VERSION"; then
  log "Installing openapi-python-client $GENERATOR_VERSION and ruff $RUFF_VERSION into $VENV"
  python3 -m venv "$VENV" 2>/dev/null || {
    [ "$(id -u)" -eq 0 ] && { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null; }
    python3 -m venv "$VENV"
  }
  "$VENV/bin/pip" install -q --disable-pip-version-check "openapi-python-client==$GENERATOR_VERSION" "ruff==$RUFF_VERSION"
fi

rm -rf "$WORK/out" && mkdir -p "$WORK/out"
cat >"$WORK/config.yml" <<YAML
content_type_overrides:
$(python3 -c 'import json, sys
types = sorted({t for p in json.load(open(sys.argv[1]))["paths"].values() for op in p.values()
                for r in list(op.get("responses", {}).values()) + [op.get("requestBody", {})] for t in r.get("content", {}) if t.startswith("image/")})
print("\n".join(f"  {t}: application/octet-stream" for t in types))' "$ROOT/docs/openapi.json")
YAML

log "openapi-python-client $GENERATOR_VERSION on docs/openapi.json"
# ruff (the generator's post-generation formatter) must be on PATH, or the generator warns that it is missing.
(cd "$WORK/out" && PATH="$VENV/bin:$PATH" "$VENV/bin/openapi-python-client" generate --path "$ROOT/docs/openapi.json" --meta none \
  --config "$WORK/config.yml") 2>&1 | tee "$WORK/output.txt"
status=0
if grep -qiE 'warning|error|unsupported|will not be generated|omitted' "$WORK/output.txt"; then
  echo "openapi-python-client warned (above)" >&2
  status=1
fi
# Every model the client has must be a schema the document names (snake_case of its name).
python3 - "$ROOT/docs/openapi.json" "$WORK/out" <<'PY' || status=1
import json, os, re, sys
document, out = sys.argv[1], sys.argv[2]
def snake(name):
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
named = {snake(n) for n in json.load(open(document))["components"]["schemas"]}
package = next(os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
models = {f[:-3] for f in os.listdir(os.path.join(package, "models")) if f.endswith(".py") and f != "__init__.py"}
anonymous = sorted(models - named)
print(f"{len(models)} models, {len(anonymous)} the document does not name" + (": " + ", ".join(anonymous) if anonymous else ""))
sys.exit(1 if anonymous else 0)
PY
exit $status
