import Foundation

/// A CloudEvents 1.0 event with a typed payload.
public struct CloudEvent<Payload: EventPayload>: Sendable, Equatable {
    public var id: UUID
    public var source: String
    public var time: Date
    public var subject: String
    public var trace: TraceContext?
    public var data: Payload

    public var type: String { Payload.eventType }
    public var partitionKey: String { data.partitionKey }

    public init(id: UUID = .timeOrdered(), source: String, time: Date, trace: TraceContext? = nil, data: Payload) {
        self.id = id
        self.source = source
        self.time = time
        self.subject = data.subject
        self.trace = trace
        self.data = data
    }
}

/// W3C trace context and the gateway's request id, carried from the HTTP request into every event it causes.
public struct TraceContext: Sendable, Hashable, Codable {
    public var traceparent: String?
    public var tracestate: String?
    public var requestID: String?

    public init(traceparent: String? = nil, tracestate: String? = nil, requestID: String? = nil) {
        self.traceparent = traceparent
        self.tracestate = tracestate
        self.requestID = requestID
    }

    public var isEmpty: Bool { traceparent == nil && tracestate == nil && requestID == nil }
}

/// A CloudEvent whose payload is still JSON bytes: what the outbox stores and what a consumer receives before it
/// knows the payload type.
public struct EventRecord: Sendable, Equatable {
    public static let specVersion = "1.0"
    public static let contentType = "application/json"

    public var id: UUID
    public var source: String
    public var type: String
    public var time: Date
    public var subject: String
    public var partitionKey: String
    public var trace: TraceContext
    public var data: Data

    public init(
        id: UUID, source: String, type: String, time: Date, subject: String, partitionKey: String,
        trace: TraceContext = TraceContext(), data: Data
    ) {
        self.id = id
        self.source = source
        self.type = type
        self.time = time
        self.subject = subject
        self.partitionKey = partitionKey
        self.trace = trace
        self.data = data
    }

    public init<Payload: EventPayload>(_ event: CloudEvent<Payload>) throws {
        self.init(
            id: event.id, source: event.source, type: event.type, time: event.time, subject: event.subject,
            partitionKey: event.partitionKey, trace: event.trace ?? TraceContext(), data: try SurgeJSON.encode(event.data))
    }

    public func decode<Payload: EventPayload>(as payload: Payload.Type) throws -> CloudEvent<Payload> {
        guard type == Payload.eventType else {
            throw EventDecodingError.typeMismatch(expected: Payload.eventType, actual: type)
        }
        let data = try SurgeJSON.decode(Payload.self, from: data)
        var event = CloudEvent(id: id, source: source, time: time, trace: trace.isEmpty ? nil : trace, data: data)
        event.subject = subject
        return event
    }
}

public enum EventDecodingError: Error, Equatable, CustomStringConvertible {
    case missingHeader(String)
    case invalidHeader(String, String)
    case unsupportedSpecVersion(String)
    case typeMismatch(expected: String, actual: String)

    public var description: String {
        switch self {
        case .missingHeader(let name): "missing CloudEvents header \(name)"
        case .invalidHeader(let name, let value): "invalid CloudEvents header \(name): \(value)"
        case .unsupportedSpecVersion(let version): "unsupported CloudEvents specversion \(version)"
        case .typeMismatch(let expected, let actual): "expected event type \(expected), got \(actual)"
        }
    }
}
