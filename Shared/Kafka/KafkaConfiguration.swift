import Foundation

/// Where the brokers are and any librdkafka properties to override. Producer and consumer add their own defaults
/// (idempotence, acks=all, manual offset store), and these properties are applied over them, except that the two the
/// delivery guarantees rest on cannot be changed: `enable.idempotence` stays true (librdkafka then refuses `acks`
/// other than all) and `enable.auto.offset.store` stays false.
public struct KafkaConfiguration: Sendable {
    public var bootstrapServers: String
    public var clientID: String
    /// Applied to producers and consumers.
    public var properties: [String: String]
    public var producerProperties: [String: String]
    public var consumerProperties: [String: String]

    public init(
        bootstrapServers: String, clientID: String, properties: [String: String] = [:],
        producerProperties: [String: String] = [:], consumerProperties: [String: String] = [:]
    ) {
        self.bootstrapServers = bootstrapServers
        self.clientID = clientID
        self.properties = properties
        self.producerProperties = producerProperties
        self.consumerProperties = consumerProperties
    }

    /// Parses `key=value` pairs separated by commas, e.g. `fetch.wait.max.ms=10,session.timeout.ms=10000`.
    public static func parseProperties(_ text: String) throws -> [String: String] {
        var properties: [String: String] = [:]
        for pair in text.split(separator: ",") where !pair.trimmingCharacters(in: .whitespaces).isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty else { throw KafkaError.configuration("expected key=value, got \(pair)") }
            properties[parts[0]] = parts[1]
        }
        return properties
    }

    /// Defaults that overrides may not change, and why.
    static let guarantees = [
        "enable.idempotence": "without it a retried produce can duplicate or reorder records",
        "enable.auto.offset.store": "an offset must be stored only after its record was handled, or a crash skips the record",
    ]

    func merged(over defaults: [String: String], _ specific: [String: String]) throws -> [String: String] {
        var all = defaults
        all["bootstrap.servers"] = bootstrapServers
        all["client.id"] = clientID
        all.merge(properties) { _, override in override }
        all.merge(specific) { _, override in override }
        for (key, reason) in Self.guarantees {
            guard let required = defaults[key], all[key]?.lowercased() != required else { continue }
            throw KafkaError.configuration("\(key) must stay \(required): \(reason)")
        }
        return all
    }
}
