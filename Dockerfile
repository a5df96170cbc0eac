# syntax=docker/dockerfile:1
# One image for every Surge service and the operator's tool; the command picks which:
#   docker run --rm surge surge-admin topics
#   docker run ... surge surge-progress
# See docs/deployment.md.

# Base images. To pin one by digest (reproducible builds, no surprise from a re-pushed tag), append the digest the
# registry gives for the tag, and bump it the same way when the tag's image is rebuilt (a security fix):
#   docker buildx imagetools inspect swift:6.3-bookworm --format '{{json .Manifest.Digest}}'
#   docker build --build-arg SWIFT_IMAGE=swift:6.3-bookworm@sha256:<digest> \
#                --build-arg RUNTIME_IMAGE=debian:bookworm-slim@sha256:<digest> .
ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

# ---- build ----
FROM ${SWIFT_IMAGE} AS build

RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get -q update \
    && apt-get -q install -y --no-install-recommends librdkafka-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /build

# Package.resolved is copied too when it exists, and then pins the dependency versions.
COPY Package.* ./
COPY Shared ./Shared
COPY Services ./Services
COPY Tools ./Tools
# SwiftPM refuses a manifest whose test target folders are missing, even when not building tests.
COPY Tests ./Tests

# What runs in production: the eight services and the operator's tool. The development broker, the benchmark and the
# service template stay out of the image (RegistryConsistencyTests keeps this list equal to the registry's).
ARG PRODUCTS="surge-gateway surge-identity surge-challenges surge-progress surge-leaderboard surge-badges surge-notifications surge-analytics surge-admin"

# The cache mount keeps compiled dependencies between image builds; the binaries are copied out of it.
RUN --mount=type=cache,target=/build/.build,sharing=locked \
    swift package resolve $([ -f Package.resolved ] && echo --force-resolved-versions) \
    && for product in $PRODUCTS; do swift build -c release --static-swift-stdlib --product "$product" || exit 1; done \
    && bin="$(swift build -c release --static-swift-stdlib --show-bin-path)" \
    && mkdir -p /staging \
    && for product in $PRODUCTS; do cp "$bin/$product" /staging/ || exit 1; done \
    && ls -l /staging

# ---- runtime ----
FROM ${RUNTIME_IMAGE}

# librdkafka1: Kafka client (linked dynamically); libstdc++6: still dynamic with --static-swift-stdlib;
# tzdata: IANA time zones; ca-certificates: TLS to PostgreSQL and Kafka; curl: container health checks;
# libjs-chart.js: Chart.js for the gateway's KPI dashboard (/admin/chart.js, CHART_JS_PATH).
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get -q update \
    && apt-get -q install -y --no-install-recommends librdkafka1 libstdc++6 tzdata ca-certificates curl libjs-chart.js \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 surge \
    && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin surge

COPY --from=build /staging/ /usr/local/bin/
# Symbolicated crash backtraces in the logs (a statically linked binary cannot find the default backtracer).
COPY --from=build /usr/libexec/swift/linux/swift-backtrace-static /usr/local/libexec/swift-backtrace-static
ENV SWIFT_BACKTRACE=enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/usr/local/libexec/swift-backtrace-static

# Inside a container, listening on loopback only is never useful.
ENV HTTP_HOST=0.0.0.0
# The commit built, for surge_build_info: docker build --build-arg SURGE_COMMIT=$(git rev-parse HEAD) .
ARG SURGE_COMMIT=unknown
ENV SURGE_COMMIT=${SURGE_COMMIT}

USER 10001:10001
# A service is healthy while its /readyz answers 200 (its database and broker reachable, consumers assigned); each
# listens on its HTTP_PORT (the registry's port in docker-compose.yml and deploy/k8s). A one-off `surge-admin` run
# has no server and ends before the first check.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
    CMD curl -fsS -o /dev/null "http://127.0.0.1:${HTTP_PORT:-8080}/readyz" || exit 1
EXPOSE 8080 8081 8082 8083 8084 8085 8086 8087
CMD ["surge-admin", "--help"]
