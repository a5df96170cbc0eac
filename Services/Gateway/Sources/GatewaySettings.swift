import GatewayDomain
import SurgeContracts
import SurgeRuntime

/// The gateway's own settings, read once, before anything connects, so a bad one is reported alone:
///
/// | variable | default | meaning |
/// |---|---|---|
/// | `UPSTREAM_TIMEOUT_SECONDS` | 30 | how long a service may take to answer a forwarded request |
/// | `RATE_LIMIT_*` | see `RateLimits.from` | budgets per minute |
/// | `TRUSTED_PROXY_HOPS` | 0 | proxies in front of the gateway whose `X-Forwarded-For` entry is believed |
/// | `MAX_REQUEST_BYTES`, `MAX_UPLOAD_BYTES` | 1 MiB, 10 MiB | body limits of JSON requests and of uploads |
/// | `CORS_ALLOWED_ORIGINS`, `CORS_MAX_AGE_SECONDS` | none, 600 | see `CORSPolicy` |
/// | `CHART_JS_PATH` | Debian's `libjs-chart.js` | the dashboard's Chart.js |
/// | `STREAM_QUEUE_LIMIT`, `STREAM_CONNECTIONS_PER_USER`, `STREAM_REPLAY_EVENTS`, `STREAM_REPLAY_SECONDS`, `STREAM_HEARTBEAT_SECONDS` | 256, 5, 20000, 300, 15 | the live stream |
/// | `UPSTREAM_URL_TEMPLATE`, `UPSTREAM_<SERVICE>_URL` | `http://127.0.0.1:{port}` | see `Upstreams` |
/// | `IDENTITY_JWKS_URL` | identity's first replica + `/internal/jwks.json` | where access-token keys are fetched |
struct GatewaySettings: Sendable {
    var upstreamTimeoutSeconds: Int
    var rateLimits: RateLimits
    var clientAddress: ClientAddress
    var maxBodyBytes: Int
    var maxUploadBytes: Int
    var cors: CORSPolicy?
    var chartJSPath: String
    var stream: StreamHub.Settings
    var upstreams: [SurgeService: ReplicaSet]
    var identityJWKSURL: String

    static func from(_ reader: EnvironmentReader) throws -> GatewaySettings {
        let upstreamTimeoutSeconds = try reader.int("UPSTREAM_TIMEOUT_SECONDS", default: 30, range: 1...600)
        let rateLimits = try RateLimits.from(reader)
        let clientAddress = ClientAddress(trustedHops: try reader.int("TRUSTED_PROXY_HOPS", default: 0, range: 0...10))
        let maxBodyBytes = try reader.int("MAX_REQUEST_BYTES", default: 1 << 20, range: 1024...(64 << 20))
        let maxUploadBytes = try reader.int("MAX_UPLOAD_BYTES", default: 10 << 20, range: 1024...(256 << 20))
        let cors = try CORSPolicy.from(reader)
        let chartJSPath = reader.string("CHART_JS_PATH", default: DashboardController.defaultChartJSPath)
        let stream = StreamHub.Settings(
            queueLimit: try reader.int("STREAM_QUEUE_LIMIT", default: 256, range: 8...100_000),
            connectionsPerUser: try reader.int("STREAM_CONNECTIONS_PER_USER", default: 5, range: 1...10_000),
            connectionsPerReplica: try reader.int("STREAM_CONNECTIONS_PER_REPLICA", default: 8_000, range: 1...1_000_000),
            replayEvents: try reader.int("STREAM_REPLAY_EVENTS", default: 20_000, range: 0...10_000_000),
            replaySeconds: Double(try reader.int("STREAM_REPLAY_SECONDS", default: 300, range: 0...86_400)),
            heartbeatSeconds: Double(try reader.int("STREAM_HEARTBEAT_SECONDS", default: 15, range: 1...300)))
        let upstreams = try Upstreams.replicas(from: reader)
        let identity = upstreams[.identity]?.urls.first ?? ""
        return GatewaySettings(
            upstreamTimeoutSeconds: upstreamTimeoutSeconds, rateLimits: rateLimits, clientAddress: clientAddress, maxBodyBytes: maxBodyBytes,
            maxUploadBytes: maxUploadBytes, cors: cors, chartJSPath: chartJSPath, stream: stream, upstreams: upstreams,
            identityJWKSURL: reader.string("IDENTITY_JWKS_URL", default: identity + "/internal/jwks.json"))
    }
}
