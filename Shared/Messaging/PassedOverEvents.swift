import Foundation
import Logging
import PostgresNIO
import Synchronization

/// Events of a handled type that their handler said can have no effect (`EventHandlers.on(_:when:_:)`): the consumer
/// passes over them without a transaction, and they are recorded in `processed_events` here, many in one statement a
/// few times a second, so the inbox still shows every event the group has seen of the types it handles. Nothing
/// depends on these rows for correctness (applying such an event again does nothing), so one lost in a crash is
/// harmless.
final class PassedOverEvents: Sendable {
    private let pending = Mutex<[(id: UUID, type: String)]>([])

    func note(_ id: UUID, type: String) {
        pending.withLock { $0.append((id, type)) }
    }

    /// Records what was noted every `interval` until cancelled, and once more at the end.
    func recordUntilCancelled(group: String, client: PostgresClient, every interval: Duration = .milliseconds(200), logger: Logger) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            await record(group: group, client: client, logger: logger)
        }
    }

    func record(group: String, client: PostgresClient, logger: Logger) async {
        let events = pending.withLock { events in
            defer { events.removeAll() }
            return events
        }
        guard !events.isEmpty else { return }
        do {
            try await client.query(
                """
                INSERT INTO processed_events (consumer, event_id, event_type)
                SELECT \(group), id, type FROM unnest(\(events.map(\.id))::uuid[], \(events.map(\.type))::text[]) AS e (id, type)
                ON CONFLICT DO NOTHING
                """, logger: logger)
        } catch {
            if Task.isCancelled { return }
            pending.withLock { $0.insert(contentsOf: events, at: 0) }
            logger.debug("Recording passed-over events failed; will retry", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
