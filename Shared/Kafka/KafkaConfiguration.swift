import Foundation

/// Where the brokers are and any librdkafka properties to override. Producer and consumer add their own safe
/// defaults (idempotence, acks=all, manual offset store) which these properties may not weaken silently: they are
/// applied last, so an operator can tune them on purpose.
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

    func merged(over defaults: [String: String], _ specific: [String: String]) -> [String: String] {
        var all = defaults
        all["bootstrap.servers"] = bootstrapServers
        all["client.id"] = clientID
        all.merge(properties) { _, override in override }
        all.merge(specific) { _, override in override }
        return all
    }
}
