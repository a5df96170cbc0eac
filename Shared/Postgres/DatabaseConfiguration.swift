import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// Connection settings parsed from a `postgres://user:password@host:port/database?sslmode=require` URL.
public struct DatabaseConfiguration: Sendable, Equatable {
    public enum TLSMode: String, Sendable { case disable, prefer, require }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    public var tls: TLSMode
    public var maximumConnections: Int

    public init(
        host: String, port: Int = 5432, username: String, password: String?, database: String,
        tls: TLSMode = .disable, maximumConnections: Int = 10
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
        self.maximumConnections = maximumConnections
    }

    public init(url text: String, maximumConnections: Int = 10) throws {
        guard let components = URLComponents(string: text),
            components.scheme == "postgres" || components.scheme == "postgresql",
            let host = components.host, !host.isEmpty,
            let username = components.user, !username.isEmpty
        else { throw DatabaseConfigurationError.invalidURL }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw DatabaseConfigurationError.invalidURL }
        let sslMode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "disable"
        guard let tls = TLSMode(rawValue: sslMode) else { throw DatabaseConfigurationError.unsupportedSSLMode(sslMode) }
        self.init(
            host: host, port: components.port ?? 5432, username: username, password: components.password, database: database, tls: tls,
            maximumConnections: maximumConnections)
    }

    /// The URL form, with the password percent-encoded.
    public var url: String {
        var components = URLComponents()
        components.scheme = "postgres"
        components.user = username
        components.password = password
        components.host = host
        components.port = port
        components.path = "/" + database
        if tls != .disable { components.queryItems = [URLQueryItem(name: "sslmode", value: tls.rawValue)] }
        return components.string ?? ""
    }

    /// A client whose connections use `schema` as their search path, so a service's SQL names its own tables only.
    /// `metrics`, when given, counts the pool's connections (`PoolMetrics`).
    public func makeClient(schema: String? = nil, logger: Logger, metrics: PoolMetrics? = nil) -> PostgresClient {
        let tlsSetting: PostgresClient.Configuration.TLS =
            switch tls {
            case .disable: .disable
            case .prefer: .prefer(.makeClientConfiguration())
            case .require: .require(.makeClientConfiguration())
            }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tlsSetting)
        configuration.options.maximumConnections = maximumConnections
        if let schema {
            configuration.options.additionalStartupParameters = [("search_path", schema)]
        }
        let client = PostgresClient(configuration: configuration, backgroundLogger: metrics?.logger(observing: logger) ?? logger)
        metrics?.observe(client)
        return client
    }
}

extension DatabaseConfiguration {
    /// Opens one connection and closes it: a refused login throws the server's error at once, where the pool would
    /// keep retrying it for a minute as if the server were unreachable.
    public func checkLogin(logger: Logger) async throws {
        let tlsSetting: PostgresConnection.Configuration.TLS =
            switch tls {
            case .disable: .disable
            case .prefer: .prefer(try .init(configuration: .makeClientConfiguration()))
            case .require: .require(try .init(configuration: .makeClientConfiguration()))
            }
        let configuration = PostgresConnection.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tlsSetting)
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        try await connection.close()
    }
}

public enum DatabaseConfigurationError: Error, CustomStringConvertible {
    case invalidURL
    case unsupportedSSLMode(String)

    public var description: String {
        switch self {
        case .invalidURL: "DATABASE_URL must look like postgres://user:password@host:5432/database"
        case .unsupportedSSLMode(let mode): "sslmode \(mode) is not supported (use disable, prefer or require)"
        }
    }
}

extension PostgresClient {
    /// Runs `body` with a client that is running, then shuts it down: for one-off work such as migrations.
    public static func withRunning<Result: Sendable>(
        _ client: PostgresClient, _ body: @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Result?.self) { group in
            // Started immediately: `run()` marks the client running before its first suspension, so the body's first
            // query never finds it not yet running (PostgresNIO warns of that on every start otherwise).
            group.addImmediateTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }
}
