import Foundation
import Hummingbird
import SurgeContracts
import SurgeRuntime

/// A chore occurrence as shown.
struct ChoreOccurrence: Codable, Sendable, Equatable {
    var occurrenceID: UUID
    var choreID: UUID
    var groupID: UUID
    var title: String
    var dueOn: LocalDate
    var dueAt: Date
    var assigneeID: UUID?
    var points: Int
    var status: String
    var overdue: Bool
    var completedBy: UUID?
    var completedAt: Date?
}

extension ChoreOccurrence {
    init(_ row: ChoreOccurrenceRow) {
        self.init(
            occurrenceID: row.occurrenceID, choreID: row.choreID, groupID: row.groupID, title: row.title, dueOn: row.dueOn, dueAt: row.dueAt,
            assigneeID: row.assigneeID, points: row.points, status: row.status, overdue: row.overdue, completedBy: row.completedBy,
            completedAt: row.completedAt)
    }
}

/// A household's chores: the occurrences to do or done, and completing one.
struct ChoresController {
    let chores: HouseholdChores

    struct CompletedResponse: ResponseCodable {
        var occurrence: ChoreOccurrence
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(ProgressAPI.choreOccurrences) { request, context in
            let text = request.uri.queryParameters["status"].map(String.init) ?? ChoreOccurrenceStatus.pending.rawValue
            guard let status = ChoreOccurrenceStatus(rawValue: text) else { throw Problem.validation(field: "status", "must be pending or completed") }
            return try await chores.list(
                groupID: try request.uuidParameter("groupID", context: context), userID: try context.caller(), status: status,
                page: try PageRequest(request))
        }
        router.add(ProgressAPI.completeChore) { request, context in
            CompletedResponse(occurrence: ChoreOccurrence(try await chores.complete(
                try request.uuidParameter("occurrenceID", context: context), by: try context.caller(), trace: context.trace)))
        }
    }
}
