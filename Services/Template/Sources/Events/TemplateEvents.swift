import Foundation
import Logging
import PostgresNIO
import SurgeContracts
import SurgeMessaging
import TemplateDomain

/// The event the template produces. A real service declares its payloads in `Shared/Contracts/Events` and lists them
/// in `EventCatalogue.all` (so consumers can decode them and docs/events documents them); the template keeps its one
/// here, on a topic of its own, so the public catalogue does not list a service that is never deployed.
public struct TallyMilestoneReached: EventPayload {
    public static let descriptor = EventDescriptor(
        type: "surge.template.tally.milestone.v1", topic: TemplateEvents.topic,
        summary: "A user's check-ins on one local day reached a multiple of the milestone.",
        emitted: """
            When the template service, applying a `checkin.recorded`, finds that the user's check-ins on that local \
            day reached a multiple of the milestone.
            """)

    public static let example = CloudEvent<TallyMilestoneReached>.example(id: "6d2b9e4a-f0c7-4a15-8d3e-b7a1c5f0e289", time: "2026-03-12T20:47:01.611Z") { _ in
        TallyMilestoneReached(userID: UUID(uuidString: "4d1fefc0-fab3-4841-a2ce-69b8ed7dc573")!, date: LocalDate(year: 2026, month: 3, day: 12)!, checkIns: 10)
    }

    public var userID: UUID
    public var date: LocalDate
    public var checkIns: Int

    public var partitionKey: String { userID.key }
    public var subject: String { "users/\(userID.key)" }
}

enum TemplateEvents {
    static let topic = Topic(name: "surge.template.events", producer: "template", summary: "The template service's milestones.")

    /// What the template consumes: each check-in counts towards its day's tally (and may produce a milestone event in
    /// the same transaction, through the outbox); a deleted user is forgotten.
    static func register(in routes: inout ConsumerRoutes<TallyRecorder>, outbox: Outbox, milestoneEvery: Int) {
        routes.on(CheckInRecorded.self) { event, tallies in
            let tally = try await tallies.record(event.data.userID, on: event.data.localDate)
            if tally.isMilestone(every: milestoneEvery) {
                try await outbox.append(
                    TallyMilestoneReached(userID: tally.userID, date: tally.date, checkIns: tally.checkIns), on: tallies.connection,
                    trace: event.trace, logger: tallies.logger)
            }
        }
        routes.on(UserDeleted.self) { event, tallies in
            try await tallies.erase(event.data.userID)
        }
    }
}
