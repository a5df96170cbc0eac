import AsyncHTTPClient
import GatewayDomain
import NIOCore
import NIOPosix
import SurgeContracts
import SurgeRuntime
import Synchronization

/// Where each service's internal HTTP API listens, and the one way the gateway calls it.
///
/// A service's URL is `UPSTREAM_URL_TEMPLATE` with `{service}` and `{port}` filled in from the registry (a new
/// service needs no gateway setting), or its own `UPSTREAM_<SERVICE>_URL`: one URL, or several comma-separated for
/// replicas the gateway balances itself (round-robin; one that refuses a connection is tried last for a while).
final class Upstreams: Sendable {
    static let quarantine: Duration = .seconds(5)

    private let client: HTTPClient
    private let replicas: Mutex<[SurgeService: ReplicaSet]>

    init(_ replicas: [SurgeService: ReplicaSet], client: HTTPClient) {
        self.client = client
        self.replicas = Mutex(replicas)
    }

    /// Every upstream's replicas, as the environment sets them.
    static func replicas(from reader: EnvironmentReader) throws -> [SurgeService: ReplicaSet] {
        let template = reader.string("UPSTREAM_URL_TEMPLATE", default: "http://127.0.0.1:{port}")
        var replicas: [SurgeService: ReplicaSet] = [:]
        for service in SurgeService.deployed where service != .gateway {
            let fromTemplate = template.replacingOccurrences(of: "{service}", with: service.rawValue)
                .replacingOccurrences(of: "{port}", with: String(service.entry.port))
            let variable = reader.string(Self.variable(for: service)) == nil ? "UPSTREAM_URL_TEMPLATE" : Self.variable(for: service)
            guard let set = ReplicaSet(list: reader.string(Self.variable(for: service), default: fromTemplate)) else {
                throw ConfigurationError(variable: variable, problem: "must be one http(s) URL or several, comma-separated")
            }
            replicas[service] = set
        }
        return replicas
    }

    /// Sends `request` to `target` on one replica of `service`. A replica that refuses the connection has not seen
    /// the request, so the next one is tried; any other failure is the caller's to handle.
    func execute(_ request: HTTPClientRequest, to service: SurgeService, target: String, timeout: TimeAmount) async throws -> HTTPClientResponse {
        guard let order = replicas.withLock({ $0[service]?.order(at: .now) }) else {
            throw Problem.unavailable("The \(service.rawValue) service is not configured.")
        }
        // One URL is a load balancer or a single process: a refused connection there is worth one more try.
        let attempts = order.count == 1 ? order + order : order
        var lastError: any Error = Problem.unavailable("The \(service.rawValue) service is not reachable right now.")
        for base in attempts {
            var attempt = request
            attempt.url = base + target
            do {
                return try await client.execute(attempt, timeout: timeout)
            } catch where Self.isRefusedConnection(error) {
                replicas.withLock { $0[service]?.refused(base, at: .now, quarantine: Self.quarantine) }
                lastError = error
            }
        }
        throw lastError
    }

    static func variable(for service: SurgeService) -> String { "UPSTREAM_\(service.rawValue.uppercased())_URL" }

    /// Whether `error` says no connection was made, so the request was never sent.
    static func isRefusedConnection(_ error: any Error) -> Bool {
        switch error {
        case is NIOConnectionError: true
        case let error as HTTPClientError: error == .connectTimeout
        case ChannelError.connectTimeout: true
        case let error as IOError: [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH].contains(error.errnoCode)
        default: false
        }
    }

    /// The gateway's client for its upstreams. A replica that refuses connections fails the request at once
    /// (rather than after the connect timeout), so `execute` can move on to the next one.
    static func makeClient() -> HTTPClient {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(2)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
