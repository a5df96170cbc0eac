import Foundation
import Logging
import SurgeKafka
import SurgeMessaging
import SurgePostgres

public enum DeploymentEnvironment: String, Sendable, CaseIterable {
    case development, test, production
}

public enum LogFormat: String, Sendable, CaseIterable {
    case json, text
}

/// The settings every Surge service reads from its environment. Defaults suit a developer's machine; the README's
/// configuration table lists them all.
public struct ServiceSettings: Sendable {
    public var service: String
    public var environment: DeploymentEnvironment
    public var httpHost: String
    public var httpPort: Int
    public var database: DatabaseConfiguration
    public var kafka: KafkaConfiguration
    public var logLevel: Logger.Level
    public var logFormat: LogFormat
    public var outbox: OutboxRelay.Configuration
    public var consumerMaxAttempts: Int
    public var consumerInitialBackoff: Duration
    /// The most records of a partition a consumer applies in one transaction (`EventConsumer.Configuration.batchLimit`).
    public var consumerBatchLimit: Int
    /// Signs (gateway) and checks (services) calls between the gateway and the services.
    public var internalCalls: InternalCallSigner
    /// How long a graceful shutdown may take before the process exits regardless.
    public var shutdownTimeout: Duration
    /// The whole environment, for the service's own settings.
    public var reader: EnvironmentReader
    /// What every problem document's `type` begins with (`PROBLEM_TYPE_BASE_URL`): the gateway's `/problems/` on the
    /// public host makes each `type` a link to the problem's page.
    public var problemTypeBase = Problem.defaultTypeBase
    /// The commit the executable was built from (`SURGE_COMMIT`, which the image and `make run` set), for
    /// `surge_build_info`.
    public var commit = "unknown"

    public static func fromEnvironment(
        service: String, defaultPort: Int, _ reader: EnvironmentReader = EnvironmentReader()
    ) throws -> ServiceSettings {
        let kafka = KafkaConfiguration(
            bootstrapServers: reader.string("KAFKA_BOOTSTRAP_SERVERS", default: "localhost:9092"),
            clientID: "surge-\(service)",
            properties: try properties(reader, "KAFKA_PROPERTIES"),
            producerProperties: try properties(reader, "KAFKA_PRODUCER_PROPERTIES"),
            consumerProperties: try properties(reader, "KAFKA_CONSUMER_PROPERTIES"))
        let database: DatabaseConfiguration
        do {
            database = try DatabaseConfiguration(
                url: try reader.required("DATABASE_URL"),
                maximumConnections: try reader.int("DATABASE_POOL_SIZE", default: 10, range: 1...500))
        } catch let error as DatabaseConfigurationError {
            throw ConfigurationError(variable: "DATABASE_URL", problem: error.description)
        }
        guard let logLevel = Logger.Level(rawValue: reader.string("LOG_LEVEL", default: "info").lowercased()) else {
            throw ConfigurationError(variable: "LOG_LEVEL", problem: "must be one of trace, debug, info, notice, warning, error, critical")
        }
        return ServiceSettings(
            service: service,
            environment: try reader.oneOf("SURGE_ENV", default: DeploymentEnvironment.development),
            httpHost: reader.string("HTTP_HOST", default: "127.0.0.1"),
            httpPort: try reader.int("HTTP_PORT", default: defaultPort, range: 0...65535),
            database: database,
            kafka: kafka,
            logLevel: logLevel,
            logFormat: try reader.oneOf("LOG_FORMAT", default: LogFormat.json),
            outbox: OutboxRelay.Configuration(
                schema: service,
                pollInterval: try reader.milliseconds("OUTBOX_POLL_INTERVAL_MS", default: 1000),
                batchSize: try reader.int("OUTBOX_BATCH_SIZE", default: 500, range: 1...10_000),
                outboxRetention: .seconds(3600 * (try reader.int("OUTBOX_RETENTION_HOURS", default: 168, range: 1...100_000))),
                inboxRetention: .seconds(3600 * (try reader.int("INBOX_RETENTION_HOURS", default: 720, range: 1...100_000)))),
            consumerMaxAttempts: try reader.int("CONSUMER_MAX_ATTEMPTS", default: 5, range: 1...100),
            consumerInitialBackoff: try reader.milliseconds("CONSUMER_RETRY_BACKOFF_MS", default: 100),
            consumerBatchLimit: try reader.int("CONSUMER_BATCH_LIMIT", default: 256, range: 1...1000),
            internalCalls: try InternalCallSigner.from(reader),
            shutdownTimeout: .seconds(try reader.int("SHUTDOWN_TIMEOUT_SECONDS", default: 10, range: 1...600)),
            reader: reader,
            problemTypeBase: try problemTypeBase(reader),
            commit: reader.string("SURGE_COMMIT", default: "unknown"))
    }

    private static func problemTypeBase(_ reader: EnvironmentReader) throws -> String {
        let base = reader.string("PROBLEM_TYPE_BASE_URL", default: Problem.defaultTypeBase)
        guard let url = URL(string: base), ["http", "https"].contains(url.scheme ?? ""), url.host?.isEmpty == false, base.hasSuffix("/") else {
            throw ConfigurationError(variable: "PROBLEM_TYPE_BASE_URL", problem: "must be an http(s) URL ending in /, such as https://api.example.com/problems/")
        }
        return base
    }

    private static func properties(_ reader: EnvironmentReader, _ name: String) throws -> [String: String] {
        do {
            return try KafkaConfiguration.parseProperties(reader.string(name, default: ""))
        } catch {
            throw ConfigurationError(variable: name, problem: "must be key=value pairs separated by commas")
        }
    }
}
