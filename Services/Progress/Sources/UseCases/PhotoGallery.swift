import Foundation
import ProgressDomain
import SurgeRuntime

/// Photos to look at: one photo's bytes, and the galleries of an attempt and of a competition, for those allowed.
struct PhotoGallery: Sendable {
    let storage: ProgressStorage

    func photo(_ photoID: UUID, viewer: UUID) async throws -> (contentType: String, data: Data) {
        try await storage.read { stores in
            guard let photo = try await stores.photos.content(photoID, viewer: viewer) else { throw ProgressError.notFound(.photo) }
            return photo
        }
    }

    /// A page of one attempt's photos (the viewer's own) or one challenge's (a 404 for a challenge the viewer may not see).
    func page(attemptID: UUID? = nil, challengeID: UUID? = nil, viewer: UUID, page: PageRequest<PhotoCursor>) async throws -> Page<PhotoView> {
        try await storage.read { stores in
            if let attemptID, try await stores.attempts.find(attemptID, of: viewer) == nil {
                throw ProgressError.notFound(.attempt)
            }
            if let challengeID {
                // As the challenge itself: unknown, or invisible to a viewer who never took part, is a 404.
                guard let timeline = try await stores.projections.timeline(challengeID) else { throw ProgressError.notFound(.challenge) }
                let tookPart = try await stores.attempts.previousAttempts(viewer, challengeID: challengeID) > 0
                let mayJoin = try await stores.mayJoin(timeline.latest, userID: viewer)
                guard tookPart || mayJoin else { throw ProgressError.notFound(.challenge) }
            }
            let rows = try await stores.photos.list(
                attemptID: attemptID, challengeID: challengeID, viewer: viewer, after: page.start(.newestFirst), limit: page.fetchLimit)
            return page.page(rows.map(PhotoView.init)) { PhotoCursor(createdAt: $0.createdAt, photoID: $0.photoID) }
        }
    }
}
