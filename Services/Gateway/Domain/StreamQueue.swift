/// What one connection has yet to send. Events are kept in order and never dropped; a board standing (an event with
/// a coalescing key) is sent at most once per `coalescingInterval` per board, the latest one winning. The queue is
/// bounded, and an overflow cuts the connection rather than letting it grow: more than `limit` events piling up behind
/// a write the client has not yet taken means the client is not keeping up. While the connection waits for events, a
/// burst from the feed (a batch arriving at once after a pause) is a different thing: its next write takes it whole,
/// so it may hold up to `burstLimit`.
public struct StreamQueue: Sendable {
    public let limit: Int
    public var burstLimit: Int { limit * 16 }
    public let coalescingInterval: Double
    private var events: [StreamEvent] = []
    private var latest: [String: StreamEvent] = [:]
    /// Keys in the order their first pending standing arrived.
    private var waiting: [String] = []
    private var lastSent: [String: Double] = [:]

    public init(limit: Int, coalescingInterval: Double = 1) {
        self.limit = limit
        self.coalescingInterval = coalescingInterval
    }

    public var isEmpty: Bool { events.isEmpty && waiting.isEmpty }

    /// False when the queue is full: past `limit` while a write is in progress (`writing`), past `burstLimit` otherwise.
    public mutating func push(_ event: StreamEvent, writing: Bool) -> Bool {
        if let key = event.coalescingKey {
            if latest.updateValue(event, forKey: key) == nil { waiting.append(key) }
            return true
        }
        guard events.count < (writing ? limit : burstLimit) else { return false }
        events.append(event)
        return true
    }

    /// The events to send now, and when the next held standing may go (nil when none is held).
    public mutating func pop(now: Double) -> (events: [StreamEvent], nextDue: Double?) {
        var ready = events
        events.removeAll(keepingCapacity: true)
        var nextDue: Double?
        var stillWaiting: [String] = []
        for key in waiting {
            let due = (lastSent[key] ?? -.infinity) + coalescingInterval
            if due <= now, let event = latest.removeValue(forKey: key) {
                ready.append(event)
                lastSent[key] = now
            } else {
                stillWaiting.append(key)
                nextDue = min(nextDue ?? due, due)
            }
        }
        waiting = stillWaiting
        return (ready, nextDue)
    }

    /// Forgets what is pending for `topic` (the user left the group).
    public mutating func drop(_ topic: StreamTopic) {
        events.removeAll { $0.topic == topic }
        for key in waiting where latest[key]?.topic == topic { latest[key] = nil }
        waiting.removeAll { latest[$0] == nil }
    }
}
