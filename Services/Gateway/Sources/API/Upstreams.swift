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

    private let client: UpstreamClient
    private let replicas: Mutex<[SurgeService: ReplicaSet]>
    private let endpoints: [String: UpstreamClient.Endpoint]

    init(_ replicas: [SurgeService: ReplicaSet], client: UpstreamClient) {
        self.client = client
        self.replicas = Mutex(replicas)
        var endpoints: [String: UpstreamClient.Endpoint] = [:]
        for url in replicas.values.flatMap(\.urls) { endpoints[url] = UpstreamClient.Endpoint(url: url) }
        self.endpoints = endpoints
    }

    /// Every upstream's replicas, as the environment sets them.
    static func replicas(from reader: EnvironmentReader) throws -> [SurgeService: ReplicaSet] {
        let template = reader.string("UPSTREAM_URL_TEMPLATE", default: "http://127.0.0.1:{port}")
        var replicas: [SurgeService: ReplicaSet] = [:]
        for service in SurgeService.deployed where service != .gateway {
            let fromTemplate = template.replacingOccurrences(of: "{service}", with: service.rawValue)
                .replacingOccurrences(of: "{port}", with: String(service.entry.port))
            let variable = reader.string(Self.variable(for: service)) == nil ? "UPSTREAM_URL_TEMPLATE" : Self.variable(for: service)
            guard let set = ReplicaSet(list: reader.string(Self.variable(for: service), default: fromTemplate)),
                set.urls.allSatisfy({ UpstreamClient.Endpoint(url: $0) != nil })
            else {
                throw ConfigurationError(variable: variable, problem: "must be one http(s)://host[:port][/path] URL or several, comma-separated")
            }
            replicas[service] = set
        }
        return replicas
    }

    /// Sends `request` to one replica of `service` from a task, on `loop` if given.
    func execute(
        _ request: UpstreamClient.Request, to service: SurgeService, on loop: (any EventLoop)? = nil, timeout: TimeAmount
    ) async throws -> UpstreamClient.Response {
        let loop = loop ?? MultiThreadedEventLoopGroup.singleton.any()
        let promise = loop.makePromise(of: UpstreamClient.Response.self)
        loop.execute { self.send(request, to: service, on: loop, timeout: timeout, promise.completeWith) }
        return try await promise.futureResult.get()
    }

    /// Sends `request` to one replica of `service` from `loop` (the client connection's; called there, and
    /// `completion` runs there). A replica that refuses the connection has not seen the request, so the next one is
    /// tried; any other failure is the caller's.
    func send(
        _ request: UpstreamClient.Request, to service: SurgeService, on loop: any EventLoop, timeout: TimeAmount,
        _ completion: @escaping UpstreamClient.Completion
    ) {
        guard let order = replicas.withLock({ $0[service]?.order(at: .now) }) else {
            return completion(.failure(Problem.unavailable("The \(service.rawValue) service is not configured.")))
        }
        // One URL is a load balancer or a single process: a refused connection there is worth one more try.
        let attempts = order.count == 1 ? order + order : order
        send(
            request, to: service, trying: attempts[...], on: loop, timeout: timeout,
            lastError: Problem.unavailable("The \(service.rawValue) service is not reachable right now."), completion)
    }

    private func send(
        _ request: UpstreamClient.Request, to service: SurgeService, trying bases: ArraySlice<String>, on loop: any EventLoop,
        timeout: TimeAmount, lastError: any Error, _ completion: @escaping UpstreamClient.Completion
    ) {
        guard let base = bases.first else { return completion(.failure(lastError)) }
        guard let endpoint = endpoints[base] else {
            return send(request, to: service, trying: bases.dropFirst(), on: loop, timeout: timeout, lastError: lastError, completion)
        }
        client.send(request, to: endpoint, on: loop, timeout: timeout) { result in
            guard case .failure(let error) = result, Self.isRefusedConnection(error) else { return completion(result) }
            self.replicas.withLock { $0[service]?.refused(base, at: .now, quarantine: Self.quarantine) }
            self.send(request, to: service, trying: bases.dropFirst(), on: loop, timeout: timeout, lastError: error, completion)
        }
    }

    static func variable(for service: SurgeService) -> String { "UPSTREAM_\(service.rawValue.uppercased())_URL" }

    /// Whether `error` says no connection was made, so the request was never sent.
    static func isRefusedConnection(_ error: any Error) -> Bool {
        switch error {
        case is NIOConnectionError: true
        case ChannelError.connectTimeout: true
        case let error as IOError: [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH].contains(error.errnoCode)
        default: false
        }
    }
}
