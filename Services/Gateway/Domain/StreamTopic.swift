import Foundation
import SurgeContracts

/// What a stream event is about, and so who may receive it: a user's own feed, a group's (household's) board and
/// chores, or a challenge's board.
public enum StreamTopic: Hashable, Sendable, CustomStringConvertible {
    case user(UUID)
    case group(UUID)
    case challenge(UUID)

    /// A board a client asks for: `group:<id>` or `challenge:<id>` (a competition is a challenge).
    public init?(board text: Substring) {
        let parts = text.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let id = UUID(text: parts[1]) else { return nil }
        switch parts[0] {
        case "group": self = .group(id)
        case "challenge", "competition": self = .challenge(id)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .user(let id): "user:\(id.key)"
        case .group(let id): "group:\(id.key)"
        case .challenge(let id): "challenge:\(id.key)"
        }
    }
}

/// One event for the stream's clients: its id (the Kafka record's place, the same on every gateway replica), its
/// name (`notification`, `board`...), its JSON data and its topic. Events with a `coalescingKey` (board standings) may
/// be merged into the latest one for the same key; the others are never dropped.
public struct StreamEvent: Sendable, Equatable {
    public var id: String
    public var name: String
    public var data: String
    public var topic: StreamTopic
    public var coalescingKey: String?

    public init(id: String, name: String, data: String, topic: StreamTopic, coalescingKey: String? = nil) {
        self.id = id
        self.name = name
        self.data = data
        self.topic = topic
        self.coalescingKey = coalescingKey
    }

    public var serverSentEvent: ServerSentEvent { ServerSentEvent(id: id, name: name, data: data) }
}
