/// An entry of the journal: anything with the id a client sends back as `Last-Event-ID`.
public protocol StreamJournalEntry: Sendable {
    var id: String { get }
}

extension StreamEvent: StreamJournalEntry {}

/// The latest stream events, kept for a bounded time and count, so that a client reconnecting with `Last-Event-ID`
/// gets what it missed, whether or not anyone was connected meanwhile. An id that is no longer (or never was) in the
/// journal cannot be resumed from: the client must refetch (`event: reset`).
public struct StreamJournal<Entry: StreamJournalEntry>: Sendable {
    public let capacity: Int
    public let maxAge: Double
    private var entries: [(sequence: Int, time: Double, entry: Entry)] = []
    private var head = 0
    private var sequences: [String: Int] = [:]
    private var nextSequence = 0

    public init(capacity: Int, maxAge: Double) {
        self.capacity = capacity
        self.maxAge = maxAge
    }

    public var count: Int { entries.count - head }

    public mutating func append(_ entry: Entry, at time: Double) {
        guard capacity > 0 else { return }
        entries.append((nextSequence, time, entry))
        sequences[entry.id] = nextSequence
        nextSequence += 1
        evict(now: time)
    }

    /// The entries after the one named `id`, oldest first; nil when `id` is not in the journal (or too old).
    public func entries(after id: String, now: Double) -> [Entry]? {
        guard let sequence = sequences[id], let first = entries[head...].first?.sequence else { return nil }
        let position = head + sequence - first
        guard now - entries[position].time <= maxAge else { return nil }
        return entries[(position + 1)...].map(\.entry)
    }

    private mutating func evict(now: Double) {
        while head < entries.count, entries.count - head > capacity || now - entries[head].time > maxAge {
            sequences[entries[head].entry.id] = nil
            head += 1
        }
        if head > 1024 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}

extension StreamJournal where Entry == StreamEvent {
    /// The events of `topics` after the one named `id`; nil when it cannot be resumed from.
    public func events(after id: String, topics: Set<StreamTopic>, now: Double) -> [StreamEvent]? {
        entries(after: id, now: now)?.filter { topics.contains($0.topic) }
    }
}
