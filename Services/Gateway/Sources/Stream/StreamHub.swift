import Foundation
import GatewayDomain
import Metrics
import Synchronization

/// The connected stream clients of this gateway replica, by topic, and the journal reconnecting clients resume from.
/// Every replica follows every event (`StreamFeed`), so a client gets its events whichever replica holds it.
final class StreamHub: Sendable {
    struct Settings: Sendable {
        var queueLimit = 256
        var connectionsPerUser = 5
        /// Open streams one replica holds at most: each costs about 32 KiB (docs/gateway.md, "The live stream's fan-out").
        var connectionsPerReplica = 8_000
        var replayEvents = 20_000
        var replaySeconds = 300.0
        var heartbeatSeconds = 15.0
    }

    enum Refusal: Error { case tooManyConnections(limit: Int), replicaFull, shuttingDown }

    /// A record as it arrived, routed (decoded) only when a client resumes past it.
    struct Recorded: StreamJournalEntry {
        var id: String
        var type: String
        var value: Data
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var byTopic: [StreamTopic: Set<Int>] = [:]
        var perUser: [UUID: Int] = [:]
        var journal: StreamJournal<Recorded>
        var nextID = 0
        var shuttingDown = false
    }

    let settings: Settings
    private let state: Mutex<State>
    /// What a recorded record is for clients (nil: nothing any client receives).
    private let route: @Sendable (Recorded) -> StreamEvent?

    init(settings: Settings, route: @escaping @Sendable (Recorded) -> StreamEvent?) {
        self.settings = settings
        self.route = route
        state = Mutex(State(journal: StreamJournal(capacity: settings.replayEvents, maxAge: settings.replaySeconds)))
        // The series exist from the start, at zero, so that a dashboard shows them before the first stream.
        Self.connections.record(0)
        _ = Subscriber.cutOff
    }

    var connectionCount: Int { state.withLock { $0.subscribers.count } }

    private static let connections = Gauge(label: "surge_stream_connections")

    /// Connects a client of `sessionID` (its access token's `sid`, nil for a token without one) to `topics`. With
    /// `lastEventID`, also returns what it missed (nil: it cannot be resumed).
    func subscribe(
        userID: UUID, sessionID: UUID? = nil, topics: Set<StreamTopic>, lastEventID: String?, now: Double
    ) throws(Refusal) -> (Subscriber, replay: [StreamEvent]?) {
        let limit = settings.connectionsPerUser
        let replicaLimit = settings.connectionsPerReplica
        let queueLimit = settings.queueLimit
        let result: Result<(Subscriber, [Recorded]?), Refusal> = state.withLock { state in
            guard !state.shuttingDown else { return .failure(.shuttingDown) }
            guard state.perUser[userID, default: 0] < limit else { return .failure(.tooManyConnections(limit: limit)) }
            guard state.subscribers.count < replicaLimit else { return .failure(.replicaFull) }
            let subscriber = Subscriber(id: state.nextID, userID: userID, sessionID: sessionID, topics: topics, queueLimit: queueLimit)
            state.nextID += 1
            state.subscribers[subscriber.id] = subscriber
            state.perUser[userID, default: 0] += 1
            for topic in topics { state.byTopic[topic, default: []].insert(subscriber.id) }
            Self.connections.record(state.subscribers.count)
            return .success((subscriber, lastEventID.flatMap { state.journal.entries(after: $0, now: now) }))
        }
        let (subscriber, missed) = try result.get()
        guard let missed else { return (subscriber, nil) }
        // Routed outside the lock: decoding is the costly part. A record journaled just before the subscription may
        // also be on its way to the new subscriber's queue: the subscriber ignores the last replayed ids once.
        let replay = missed.compactMap(route).filter { topics.contains($0.topic) }
        subscriber.ignore(replay.suffix(64).map(\.id))
        return (subscriber, replay)
    }

    func remove(_ subscriber: Subscriber) {
        state.withLock { state in
            guard state.subscribers.removeValue(forKey: subscriber.id) != nil else { return }
            state.perUser[subscriber.userID, default: 1] -= 1
            if state.perUser[subscriber.userID] == 0 { state.perUser[subscriber.userID] = nil }
            for topic in subscriber.topics { state.byTopic[topic]?.remove(subscriber.id) }
            Self.connections.record(state.subscribers.count)
        }
    }

    /// Journals a record any client may receive, and queues it for every connected client of its topic.
    func record(_ recorded: Recorded, now: Double) {
        let connected = state.withLock { state -> Bool in
            state.journal.append(recorded, at: now)
            return !state.subscribers.isEmpty
        }
        guard connected, let event = route(recorded) else { return }
        publish(event)
    }

    /// Queues `event` for every client of its topic.
    func publish(_ event: StreamEvent) {
        let receivers = state.withLock { state in (state.byTopic[event.topic] ?? []).compactMap { state.subscribers[$0] } }
        for subscriber in receivers { subscriber.push(event) }
    }

    /// The user may no longer see `topic` (they left the group): their connections stop receiving it and are told.
    func revoke(_ topic: StreamTopic, from userID: UUID) {
        let affected = state.withLock { state -> [Subscriber] in
            let ids = (state.byTopic[topic] ?? []).filter { state.subscribers[$0]?.userID == userID }
            state.byTopic[topic]?.subtract(ids)
            return ids.compactMap { state.subscribers[$0] }
        }
        for subscriber in affected { subscriber.revoke(topic) }
    }

    /// Ends every connection of a user (the account was deleted).
    func disconnect(userID: UUID) {
        let affected = state.withLock { state in state.subscribers.values.filter { $0.userID == userID } }
        for subscriber in affected { subscriber.close(.accountDeleted) }
    }

    /// Ends every connection opened with a token (or a ticket issued to a token) of these sessions, which identity
    /// revoked; the user's other sessions keep theirs.
    func endSessions(_ sessionIDs: Set<UUID>) {
        let affected = state.withLock { state in
            state.subscribers.values.filter { subscriber in subscriber.sessionID.map(sessionIDs.contains) ?? false }
        }
        for subscriber in affected { subscriber.close(.sessionRevoked) }
    }

    /// Tells every client to reconnect elsewhere and refuses new ones.
    func shutDown() {
        let all = state.withLock { state -> [Subscriber] in
            state.shuttingDown = true
            return Array(state.subscribers.values)
        }
        for subscriber in all { subscriber.close(.shuttingDown) }
    }
}

/// One connected client: its topics and the events it has yet to send.
final class Subscriber: Sendable {
    enum CloseReason: Sendable, Equatable { case tooSlow, shuttingDown, accountDeleted, sessionRevoked, clientGone }

    enum Next: Sendable {
        case events([StreamEvent], revoked: [StreamTopic])
        case idle
        case closed(CloseReason)
    }

    let id: Int
    let userID: UUID
    let sessionID: UUID?
    let topics: Set<StreamTopic>

    fileprivate struct State {
        var queue: StreamQueue
        var replayed: Set<String> = []
        var revoked: [StreamTopic] = []
        var closed: CloseReason?
        /// The connection is writing what `next` last returned: the client has yet to take it.
        var writing = false
        var signalled = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state: Mutex<State>
    static let cutOff = Counter(label: "surge_stream_cut_off_total")

    init(id: Int, userID: UUID, sessionID: UUID?, topics: Set<StreamTopic>, queueLimit: Int) {
        self.id = id
        self.userID = userID
        self.sessionID = sessionID
        self.topics = topics
        state = Mutex(State(queue: StreamQueue(limit: queueLimit)))
    }

    func push(_ event: StreamEvent) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.closed == nil, !state.revoked.contains(event.topic), state.replayed.remove(event.id) == nil else { return nil }
            if !state.queue.push(event, writing: state.writing) {
                state.closed = .tooSlow
                Self.cutOff.increment()
            }
            return state.wake()
        }
        waiter?.resume()
    }

    /// Events already sent in the replay: not queued again if they arrive live too.
    func ignore(_ ids: [String]) {
        state.withLock { $0.replayed.formUnion(ids) }
    }

    func revoke(_ topic: StreamTopic) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.queue.drop(topic)
            state.revoked.append(topic)
            return state.wake()
        }
        waiter?.resume()
    }

    func close(_ reason: CloseReason) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.closed == nil { state.closed = reason }
            return state.wake()
        }
        waiter?.resume()
    }

    var closeReason: CloseReason? { state.withLock { $0.closed } }

    /// What to send next: waits until something is due or `deadline` passes (`.idle`: time for a heartbeat). Calling it
    /// again says that the previous write was taken.
    func next(until deadline: ContinuousClock.Instant) async -> Next {
        var deadline = deadline
        while true {
            let now = ContinuousClock.now
            let (next, due) = state.withLock { state -> (Next?, Double?) in
                state.writing = false
                if let reason = state.closed { return (.closed(reason), nil) }
                let popped = state.queue.pop(now: StreamClock.seconds(now))
                let revoked = state.revoked
                state.revoked = []
                state.signalled = false
                if popped.events.isEmpty && revoked.isEmpty { return (nil, popped.nextDue) }
                state.writing = true
                return (.events(popped.events, revoked: revoked), nil)
            }
            if let next { return next }
            if now >= deadline {
                state.withLock { $0.writing = true }
                return .idle
            }
            if let due { deadline = min(deadline, now + .seconds(due - StreamClock.seconds(now))) }
            await waitForSignal(until: deadline)
        }
    }

    private func waitForSignal(until deadline: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.signal() }
            group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
            await group.next()
            group.cancelAll()
        }
    }

    private func signal() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.signalled || state.closed != nil || Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state in
                let waiter = state.waiter
                state.waiter = nil
                return waiter
            }?.resume()
        }
    }
}

extension Subscriber.State {
    fileprivate mutating func wake() -> CheckedContinuation<Void, Never>? {
        signalled = true
        let waiter = self.waiter
        self.waiter = nil
        return waiter
    }
}
