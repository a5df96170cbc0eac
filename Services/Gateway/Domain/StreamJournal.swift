/// The latest stream events, kept for a bounded time and count, so that a client reconnecting with `Last-Event-ID`
/// gets what it missed. An id that is no longer (or never was) in the journal cannot be resumed from: the client
/// must refetch (`event: reset`).
public struct StreamJournal: Sendable {
    public let capacity: Int
    public let maxAge: Double
    private var entries: [(sequence: Int, time: Double, event: StreamEvent)] = []
    private var head = 0
    private var sequences: [String: Int] = [:]
    private var nextSequence = 0

    public init(capacity: Int, maxAge: Double) {
        self.capacity = capacity
        self.maxAge = maxAge
    }

    public var count: Int { entries.count - head }

    public mutating func append(_ event: StreamEvent, at time: Double) {
        guard capacity > 0 else { return }
        entries.append((nextSequence, time, event))
        sequences[event.id] = nextSequence
        nextSequence += 1
        evict(now: time)
    }

    /// The events of `topics` after the one named `id`, oldest first; nil when `id` is not in the journal.
    public func events(after id: String, topics: Set<StreamTopic>, now: Double) -> [StreamEvent]? {
        guard let sequence = sequences[id], let first = entries[head...].first?.sequence else { return nil }
        let position = head + sequence - first
        guard now - entries[position].time <= maxAge else { return nil }
        return entries[(position + 1)...].filter { topics.contains($0.event.topic) }.map(\.event)
    }

    private mutating func evict(now: Double) {
        while head < entries.count, entries.count - head > capacity || now - entries[head].time > maxAge {
            sequences[entries[head].event.id] = nil
            head += 1
        }
        if head > 1024 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
