import Foundation
import Hummingbird
import SurgeRuntime

/// The badge service's routes over `BadgeQueries`.
struct BadgesController {
    let queries: BadgeQueries

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(BadgesAPI.catalogue) { request, context in
            let caller = try context.caller()
            guard let text = request.uri.queryParameters["challengeID"].map(String.init) else {
                return try await queries.catalogueView(caller: caller)
            }
            guard let challengeID = UUID(uuidString: text) else { throw Problem.validation(field: "challengeID", "must be a UUID") }
            return try await queries.challengeCatalogueView(challengeID, caller: caller)
        }
        router.add(BadgesAPI.mine) { _, context in
            try await queries.mine(caller: try context.caller())
        }
        router.add(BadgesAPI.users) { request, context in
            try await queries.user(try request.uuidParameter("userID", context: context), caller: try context.caller())
        }
        router.get("/internal/export") { _, context in
            try await queries.export(userID: try context.caller())
        }
    }
}
