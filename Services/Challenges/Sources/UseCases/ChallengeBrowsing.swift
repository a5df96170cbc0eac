import ChallengesDomain
import Foundation
import SurgeContracts
import SurgeRuntime

/// The library (browse and search), the caller's own and invited definitions, and a household's chores, one page
/// at a time.
struct ChallengeBrowsing {
    let lists: ChallengeListStore
    let storage: ChallengeStorage

    func browse(_ query: BrowseQuery, page: PageRequest<BrowsePosition>, caller: UUID) async throws -> Page<ListedChallenge> {
        // A cursor orders by its own sort's key: one from another sort would skip or repeat items.
        if let position = page.after, position.sort != query.sort {
            throw ChallengesError.unknownCursor
        }
        return try await lists.browse(query, page: page, caller: caller)
    }

    func mine(kind: ChallengeKind?, page: PageRequest<SequencePosition>, caller: UUID) async throws -> Page<ListedChallenge> {
        try await lists.mine(kind: kind, page: page, caller: caller)
    }

    /// For the household's members only (a member who joined a moment ago is waited for); 404 for anyone else.
    func chores(groupID: UUID, page: PageRequest<SequencePosition>, caller: UUID) async throws -> Page<ListedChallenge> {
        let member = try await storage.reading { store in
            try await CatchUp.standard.until { try await store.isMember(caller, of: groupID) }
        }
        guard member else { throw ChallengesError.notFound(.group) }
        return try await lists.chores(groupID: groupID, page: page, caller: caller)
    }
}
