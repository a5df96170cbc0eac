import Foundation
import Hummingbird
import SurgeRuntime

struct ChoresController {
    let chores: ChoreStore

    struct CompletedResponse: ResponseCodable {
        var occurrence: ChoreOccurrence
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(ProgressAPI.choreOccurrences) { request, context in
            let status = request.uri.queryParameters["status"].map(String.init) ?? "pending"
            guard ChoreOccurrenceStatus(rawValue: status) != nil else { throw Problem.validation(field: "status", "must be pending or completed") }
            return try await chores.list(
                groupID: try request.uuidParameter("groupID", context: context), userID: try context.caller(), status: status,
                page: try PageRequest(request))
        }
        router.add(ProgressAPI.completeChore) { request, context in
            CompletedResponse(occurrence: try await chores.complete(
                try request.uuidParameter("occurrenceID", context: context), by: try context.caller(), trace: context.trace))
        }
    }
}
