import Foundation
import GatewayDomain
import Logging
import SurgeContracts
import SurgeKafka

/// Turns the public topics' records into stream events for this replica's clients: a user's own events (notifications,
/// badges, check-ins, days, streaks, points, attempts, rank moves), a group's board standings, chores and chore edits,
/// a challenge's board standings. Every such record is journaled for resuming clients; it is decoded only when a client
/// is connected or resumes past it. Membership and deletion events revoke what a user may still receive.
struct StreamFeed: Sendable {
    let hub: StreamHub
    let logger: Logger

    /// Every deployed service's topic, from the registry.
    static let topics = SurgeService.deployed.compactMap(\.entry.topic).map(\.name)

    /// The fields events are routed by; each event type has the ones it needs.
    private struct Routing: Decodable {
        struct Definition: Decodable { var groupID: UUID? }
        var userID: UUID?
        var groupID: UUID?
        var subjectID: UUID?
        var scope: BoardScope?
        var board: String?
        var change: String?
        var definition: Definition?
        var channel: String?
    }

    fileprivate enum Route {
        /// The user's own feed.
        case own(String)
        /// The board of the event's scope and subject; standings coalesce per board.
        case board(String, coalescing: Bool)
        /// The group the event names (chores) or the group of the definition (a chore's edit).
        case group(String)
        case definitionGroup(String)
    }

    private static let routes: [String: Route] = [
        NotificationSent.descriptor.type: .own("notification"),
        BadgeAwarded.descriptor.type: .own("badge"),
        DayJudged.descriptor.type: .own("day"),
        StreakChanged.descriptor.type: .own("streak"),
        CheckInRecorded.descriptor.type: .own("checkin"),
        CheckInUndone.descriptor.type: .own("checkin-undone"),
        PointsAwarded.descriptor.type: .own("points"),
        AttemptStarted.descriptor.type: .own("attempt-started"),
        AttemptEnded.descriptor.type: .own("attempt-ended"),
        AttemptPaused.descriptor.type: .own("attempt-paused"),
        AttemptResumed.descriptor.type: .own("attempt-resumed"),
        RankChanged.descriptor.type: .own("rank"),
        StandingChanged.descriptor.type: .board("board", coalescing: true),
        WindowClosed.descriptor.type: .board("board-closed", coalescing: false),
        ChoreOccurrenceChanged.descriptor.type: .group("chore"),
        ChallengeChanged.descriptor.type: .definitionGroup("challenge-changed"),
    ]

    /// The names of the caller's own events, for the API's documentation.
    static var ownEventNames: [String] {
        routes.values.compactMap { if case .own(let name) = $0 { name } else { nil } }.sorted()
    }

    func handle(_ message: KafkaMessage) {
        guard let type = message.header(EventRecord.Header.type), let value = message.value else { return }
        if type == GroupMembershipChanged.descriptor.type || type == UserDeleted.descriptor.type {
            control(type, value)
            return
        }
        guard Self.routes[type] != nil else { return }
        hub.record(StreamHub.Recorded(id: Self.eventID(message), type: type, value: value), now: StreamClock.now())
    }

    /// The stream event a record is, for whom; nil when it names nobody.
    static func route(_ recorded: StreamHub.Recorded, logger: Logger) -> StreamEvent? {
        guard let route = routes[recorded.type], let routing = decode(recorded.value, type: recorded.type, logger: logger) else { return nil }
        // A notification is announced once per channel it reaches; the app hears of it once, as the inbox's.
        if recorded.type == NotificationSent.descriptor.type, routing.channel != "inbox" { return nil }
        let topic: StreamTopic?
        var coalescingKey: String?
        switch route {
        case .own: topic = routing.userID.map(StreamTopic.user)
        case .board(_, let coalescing):
            topic = routing.subjectID.map { routing.scope == .group ? .group($0) : .challenge($0) }
            if coalescing { coalescingKey = routing.board }
        case .group: topic = routing.groupID.map(StreamTopic.group)
        case .definitionGroup: topic = routing.definition?.groupID.map(StreamTopic.group)
        }
        guard let topic else { return nil }
        return StreamEvent(
            id: recorded.id, name: route.name, data: String(decoding: recorded.value, as: UTF8.self), topic: topic, coalescingKey: coalescingKey)
    }

    private func control(_ type: String, _ value: Data) {
        guard let routing = Self.decode(value, type: type, logger: logger), let userID = routing.userID else { return }
        if type == UserDeleted.descriptor.type {
            hub.disconnect(userID: userID)
        } else if let groupID = routing.groupID, routing.change == MembershipChange.left.rawValue || routing.change == MembershipChange.removed.rawValue {
            hub.revoke(.group(groupID), from: userID)
        }
    }

    private static func decode(_ value: Data, type: String, logger: Logger) -> Routing? {
        do {
            return try SurgeJSON.decode(Routing.self, from: value)
        } catch {
            logger.warning("Stream feed cannot route an event", metadata: ["type": "\(type)", "error": "\(error)"])
            return nil
        }
    }

    /// The record's place in its topic: the same on every replica, so a client may resume on another one.
    static func eventID(_ message: KafkaMessage) -> String {
        let service = message.topic.split(separator: ".").dropFirst().first.map(String.init) ?? message.topic
        return "\(service)-\(message.partition)-\(message.offset)"
    }
}

extension StreamFeed.Route {
    fileprivate var name: String {
        switch self {
        case .own(let name), .board(let name, _), .group(let name), .definitionGroup(let name): name
        }
    }
}

/// Seconds on a monotonic clock, for the journal's ages and the coalescing intervals.
enum StreamClock {
    private static let epoch = ContinuousClock.now

    static func now() -> Double { seconds(ContinuousClock.now) }

    static func seconds(_ instant: ContinuousClock.Instant) -> Double {
        let elapsed = instant - epoch
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}
