#!/usr/bin/env bash
# `make client`: regenerates the Swift client in Tests/GeneratedClient from docs/openapi.json (or the document given as
# the argument) with swift-openapi-generator 1.14.3, and records the document's SHA-256 beside it (a test fails when
# docs/openapi.json changes without the client).
#
# The generator is built once into .build-openapi (about a minute), never as a build plugin: CI and `make test` compile
# only the committed client, not the generator.
source "$(dirname "$0")/lib.sh"

GENERATOR_VERSION=1.14.3
TOOL="$ROOT/.build-openapi/tool"
CLIENT="$ROOT/Tests/GeneratedClient"
DOCUMENT="$(realpath "${1:-$ROOT/docs/openapi.json}")"

mkdir -p "$TOOL"
cat >"$TOOL/Package.swift.new" <<SWIFT
// swift-tools-version:6.0
// Written by scripts/generate-client.sh: builds swift-openapi-generator's command-line tool.
import PackageDescription

let package = Package(
    name: "surge-openapi-tool",
    dependencies: [.package(url: "https://github.com/apple/swift-openapi-generator", exact: "$GENERATOR_VERSION")],
    targets: []
)
SWIFT
if cmp -s "$TOOL/Package.swift.new" "$TOOL/Package.swift"; then rm "$TOOL/Package.swift.new"; else mv "$TOOL/Package.swift.new" "$TOOL/Package.swift"; fi

log "Building swift-openapi-generator $GENERATOR_VERSION (once; in .build-openapi)"
swift build --package-path "$TOOL" --product swift-openapi-generator 2>&1 | grep -Ev '^\[[0-9]+/[0-9]+\]' || true
GENERATOR="$(swift build --package-path "$TOOL" --product swift-openapi-generator --show-bin-path)/swift-openapi-generator"
[ -x "$GENERATOR" ] || { echo "swift-openapi-generator did not build; see above" >&2; exit 1; }

log "Generating the client from ${DOCUMENT#"$ROOT/"} into Tests/GeneratedClient/Generated"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
"$GENERATOR" generate "$DOCUMENT" --config "$CLIENT/openapi-generator-config.yaml" --output-directory "$OUT" \
  >"$OUT/generator.log" 2>&1 || { cat "$OUT/generator.log" >&2; exit 1; }
rm -rf "$CLIENT/Generated"
mkdir -p "$CLIENT/Generated"
cp "$OUT"/*.swift "$CLIENT/Generated/"
sha256sum "$DOCUMENT" | cut -d' ' -f1 >"$CLIENT/openapi.json.sha256"

echo "  $(ls "$CLIENT/Generated" | wc -l) files, $(cat "$CLIENT"/Generated/*.swift | wc -l) lines, for document $(cut -c1-12 "$CLIENT/openapi.json.sha256")"
