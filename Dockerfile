# syntax=docker/dockerfile:1
# One image for every Surge executable; the command picks the service:
#   docker run --rm surge surge-admin topics
#   docker run ... surge surge-progress
# See docs/deployment.md.

# ---- build ----
FROM swift:6.3-bookworm AS build

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

# The cache mount keeps compiled dependencies between image builds; the binaries are copied out of it.
RUN --mount=type=cache,target=/build/.build,sharing=locked \
    swift package resolve $([ -f Package.resolved ] && echo --force-resolved-versions) \
    && swift build -c release --static-swift-stdlib \
    && bin="$(swift build -c release --static-swift-stdlib --show-bin-path)" \
    && mkdir -p /staging \
    && find "$bin" -maxdepth 1 -type f -name 'surge-*' -perm -u+x -exec cp {} /staging/ \; \
    && ls -l /staging \
    && test -x /staging/surge-gateway -a -x /staging/surge-admin

# ---- runtime ----
FROM debian:bookworm-slim

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

USER 10001:10001
EXPOSE 8080 8081 8082 8083 8084 8085 8086 8087
CMD ["surge-admin", "--help"]
