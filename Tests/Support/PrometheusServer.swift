import Foundation

/// Debian's `prometheus` scraping a test stack: started with a static scrape configuration, queried over its HTTP API.
public final class PrometheusServer: Sendable {
    public let baseURL: String
    private let process: Process

    public struct Target: Sendable {
        public let service: String
        public let address: String
        public init(service: String, address: String) {
            self.service = service
            self.address = address
        }
    }

    /// Starts Prometheus scraping `targets` every second (job `surge`, label `service`) and waits until it is ready.
    public static func start(scraping targets: [Target], in directory: URL) async throws -> PrometheusServer {
        guard let executable = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw MissingTestEnvironment("prometheus is not installed: `make test` installs Debian's prometheus package (apt-get install prometheus)")
        }
        let staticConfigs = targets.map { "      - targets: ['\($0.address)']\n        labels: {service: '\($0.service)'}" }.joined(separator: "\n")
        let configuration = """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            scrape_configs:
              - job_name: surge
                static_configs:
            \(staticConfigs)

            """
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configFile = directory.appendingPathComponent("prometheus.yml")
        try configuration.write(to: configFile, atomically: true, encoding: .utf8)
        let port = try freeTCPPort()
        let log = directory.appendingPathComponent("prometheus.log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "--config.file=\(configFile.path)", "--storage.tsdb.path=\(directory.appendingPathComponent("data").path)",
            "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
        ]
        process.standardOutput = output
        process.standardError = output
        try process.run()
        TestEnvironment.recordChild(process.processIdentifier)
        let server = PrometheusServer(baseURL: "http://127.0.0.1:\(port)", process: process)
        do {
            try await waitUntil("prometheus is ready (log: \(log.path))", timeout: .seconds(60)) {
                guard process.isRunning else { throw ServiceProcessError.exited("prometheus", log.path) }
                return (try? await TestHTTP(baseURL: server.baseURL).get("/-/ready").status) == 200
            }
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    private init(baseURL: String, process: Process) {
        self.baseURL = baseURL
        self.process = process
    }

    /// The health of every active target, by its `service` label.
    public func targetHealth() async throws -> [String: String] {
        let response = try await TestHTTP(baseURL: baseURL).get("/api/v1/targets?state=active")
        let targets = ((response.json["data"] as? [String: Any])?["activeTargets"] as? [[String: Any]]) ?? []
        return Dictionary(targets.map { target in
            (((target["labels"] as? [String: Any])?["service"] as? String) ?? "?", target["health"] as? String ?? "?")
        }) { first, _ in first }
    }

    public struct QueryResult: Sendable {
        /// `success` or `error`.
        public let status: String
        public let error: String?
        /// The value of each series (instant vector) or of the scalar.
        public let values: [Double]
    }

    /// An instant query.
    public func query(_ promQL: String) async throws -> QueryResult {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "+&=;#")
        let encoded = promQL.addingPercentEncoding(withAllowedCharacters: allowed) ?? promQL
        let response = try await TestHTTP(baseURL: baseURL).get("/api/v1/query?query=\(encoded)")
        let data = response.json["data"] as? [String: Any]
        var values: [Double] = []
        if let series = data?["result"] as? [[String: Any]] {
            values = series.compactMap { ($0["value"] as? [Any])?.last as? String }.compactMap(Double.init)
        } else if let scalar = data?["result"] as? [Any], let text = scalar.last as? String, let value = Double(text) {
            values = [value]
        }
        return QueryResult(status: response.json["status"] as? String ?? "?", error: response.json["error"] as? String, values: values)
    }

    public func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}

/// A TCP port nothing listens on right now (the OS's pick for a socket bound to port 0, then closed).
func freeTCPPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
    }
    guard bound else { throw POSIXError(.EADDRINUSE) }
    return Int(UInt16(bigEndian: address.sin_port))
}
