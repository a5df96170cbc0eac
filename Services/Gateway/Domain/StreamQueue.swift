/// What one connection has yet to send. Events are kept in order and never dropped; a board standing (an event with
/// a coalescing key) is sent at most once per `coalescingInterval` per board, the latest one winning. The queue is
/// bounded: a push beyond `limit` events reports an overflow, and the connection is cut rather than allowed to grow.
public struct StreamQueue: Sendable {
    public let limit: Int
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

    /// False when the queue is full: the connection is not keeping up.
    public mutating func push(_ event: StreamEvent) -> Bool {
        if let key = event.coalescingKey {
            if latest.updateValue(event, forKey: key) == nil { waiting.append(key) }
            return true
        }
        guard events.count < limit else { return false }
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
