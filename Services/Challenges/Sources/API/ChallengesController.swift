import ChallengesDomain
import Foundation
import HTTPTypes
import Hummingbird
import SurgeContracts
import SurgeRuntime

/// The public routes over the use cases, and the caller's part of the data export.
struct ChallengesController {
    let reading: ChallengeReading
    let authoring: ChallengeAuthoring
    let invitations: ChallengeInvitations
    let likes: ChallengeLikes
    let browsing: ChallengeBrowsing
    let export: UserExport

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(ChallengesAPI.browse, use: browse)
        router.add(ChallengesAPI.create, use: create)
        router.add(ChallengesAPI.detail, use: detail)
        router.add(ChallengesAPI.version, use: version)
        router.add(ChallengesAPI.update, use: update)
        router.add(ChallengesAPI.delete, use: delete)
        router.add(ChallengesAPI.invite, use: invite)
        router.add(ChallengesAPI.like, use: like)
        router.add(ChallengesAPI.unlike, use: unlike)
        router.add(ChallengesAPI.mine, use: mine)
        router.add(ChallengesAPI.chores, use: chores)
        router.get("/internal/export", use: exportData)
    }

    static func parameters(_ request: Request) -> [String: String] {
        var parameters: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { parameters[String(name)] = String(value) }
        return parameters
    }

    @Sendable func browse(request: Request, context: SurgeRequestContext) async throws -> Page<ChallengeSummary> {
        let caller = try context.caller()
        let query = try BrowseQuery(parameters: Self.parameters(request))
        return ChallengeSummary.page(try await browsing.browse(query, page: try PageRequest<BrowsePosition>(request), caller: caller))
    }

    @Sendable func create(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<ChallengeDetail> {
        let caller = try context.caller()
        let draft = try await request.decode(as: ChallengeDraft.self, context: context)
        let created = ChallengeDetail(try await authoring.create(draft, caller: caller, trace: context.trace))
        return EditedResponse(
            status: .created, headers: [.location: "/v1/challenges/\(created.definition.challengeID.key)"], response: created)
    }

    @Sendable func detail(request: Request, context: SurgeRequestContext) async throws -> ChallengeDetail {
        let caller = try context.caller()
        return ChallengeDetail(try await reading.detail(try request.uuidParameter("challengeID", context: context), caller: caller))
    }

    @Sendable func version(request: Request, context: SurgeRequestContext) async throws -> ChallengeDetail {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        guard let text = context.parameters.get("version"), let version = Int(text), version >= 1 else {
            throw Problem.notFound("No such version.")
        }
        return ChallengeDetail(try await reading.version(version, of: id, caller: caller))
    }

    @Sendable func update(request: Request, context: SurgeRequestContext) async throws -> ChallengeDetail {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        let patch = try await request.decode(as: ChallengePatch.self, context: context)
        return ChallengeDetail(try await authoring.update(id, patch: patch, caller: caller, trace: context.trace))
    }

    @Sendable func delete(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        let confirm = Self.parameters(request)["confirm"]
        guard confirm == nil || confirm == "true" || confirm == "false" else {
            throw Problem.validation(field: "confirm", "must be true or false")
        }
        try await authoring.delete(id, confirmed: confirm == "true", caller: caller, trace: context.trace)
        return .noContent
    }

    @Sendable func invite(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<InvitationResult> {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        let body = try await request.decode(as: InvitationRequest.self, context: context)
        return EditedResponse(status: .created, response: try await invitations.invite(id, body, caller: caller, trace: context.trace))
    }

    @Sendable func like(request: Request, context: SurgeRequestContext) async throws -> LikeState {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        return try await likes.setLike(id, liked: true, caller: caller, trace: context.trace)
    }

    @Sendable func unlike(request: Request, context: SurgeRequestContext) async throws -> LikeState {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        return try await likes.setLike(id, liked: false, caller: caller, trace: context.trace)
    }

    @Sendable func mine(request: Request, context: SurgeRequestContext) async throws -> Page<ChallengeSummary> {
        let caller = try context.caller()
        var kind: ChallengeKind?
        if let text = Self.parameters(request)["kind"], !text.isEmpty {
            guard let parsed = ChallengeKind(rawValue: text) else {
                throw Problem.validation(field: "kind", "must be one of \(ChallengeKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            kind = parsed
        }
        return ChallengeSummary.page(try await browsing.mine(kind: kind, page: try PageRequest<SequencePosition>(request), caller: caller))
    }

    @Sendable func chores(request: Request, context: SurgeRequestContext) async throws -> Page<ChallengeSummary> {
        let caller = try context.caller()
        let groupID = try request.uuidParameter("groupID", context: context)
        return ChallengeSummary.page(try await browsing.chores(groupID: groupID, page: try PageRequest<SequencePosition>(request), caller: caller))
    }

    /// Challenges' part of the caller's data export (`GET /internal/export`, merged by the gateway).
    @Sendable func exportData(request: Request, context: SurgeRequestContext) async throws -> Response {
        let json = try await export.json(for: try context.caller())
        return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }
}
