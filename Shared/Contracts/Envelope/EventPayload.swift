import Foundation

/// Describes one versioned event type: its CloudEvents `type`, the topic it travels on, what it means and when it is
/// emitted.
public struct EventDescriptor: Sendable, Hashable {
    public let type: String
    public let topic: Topic
    public let summary: String
    /// Which API calls or which process of the producer emit it, in which order with the events beside it.
    public let emitted: String

    public init(type: String, topic: Topic, summary: String, emitted: String) {
        self.type = type
        self.topic = topic
        self.summary = summary
        self.emitted = emitted
    }
}

/// The `data` of a Surge CloudEvent. Payloads are flat Codable structs of strings, numbers, booleans, dates, UUIDs,
/// string enums, arrays and nested structs, so that their JSON Schema can be derived from the type itself.
public protocol EventPayload: Codable, Sendable, Equatable {
    static var descriptor: EventDescriptor { get }
    /// A realistic event of this type as its producer publishes it: what the event catalogue shows, and what a test
    /// checks against the type's schema.
    static var example: CloudEvent<Self> { get }
    /// The user or group the event is about; the Kafka record key.
    var partitionKey: String { get }
    /// The CloudEvents `subject`: the resource inside the source the event is about.
    var subject: String { get }
}

extension EventPayload {
    public static var eventType: String { descriptor.type }
}
