import ChallengesDomain
import Foundation
import HTTPTypes
import Hummingbird
import SurgeContracts
import SurgeRuntime

extension ChallengeDetail: ResponseEncodable {}
extension ChallengeSummary: ResponseEncodable {}
extension LikeState: ResponseEncodable {}
extension InvitationResult: ResponseEncodable {}

struct ChallengesController<Repository: ChallengeRepository> {
    let challenges: Repository

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
    }

    static func parameters(_ request: Request) -> [String: String] {
        var parameters: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { parameters[String(name)] = String(value) }
        return parameters
    }

    @Sendable func browse(request: Request, context: SurgeRequestContext) async throws -> Page<ChallengeSummary> {
        let caller = try context.caller()
        let query = try ChallengesProblems.mapping { try BrowseQuery(parameters: Self.parameters(request)) }
        return try await challenges.browse(query, page: try PageRequest<BrowsePosition>(request), caller: caller)
    }

    @Sendable func create(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<ChallengeDetail> {
        let caller = try context.caller()
        let draft = try await request.decode(as: ChallengeDraft.self, context: context)
        let created = try await challenges.create(draft, caller: caller, trace: context.trace)
        return EditedResponse(
            status: .created, headers: [.location: "/v1/challenges/\(created.definition.challengeID.key)"], response: created)
    }

    @Sendable func detail(request: Request, context: SurgeRequestContext) async throws -> ChallengeDetail {
        let caller = try context.caller()
        return try await challenges.detail(try request.uuidParameter("challengeID", context: context), caller: caller)
    }

    @Sendable func version(request: Request, context: SurgeRequestContext) async throws -> ChallengeDetail {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        guard let text = context.parameters.get("version"), let version = Int(text), version >= 1 else {
            throw Problem.notFound("No such version.")
        }
        return try await challenges.version(id, version: version, caller: caller)
    }

    @Sendable func update(request: Request, context: SurgeRequestContext) async throws -> ChallengeDetail {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        let patch = try await request.decode(as: ChallengePatch.self, context: context)
        return try await challenges.update(id, patch: patch, caller: caller, trace: context.trace)
    }

    @Sendable func delete(request: Request, context: SurgeRequestContext) async throws -> HTTPResponse.Status {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        let confirm = Self.parameters(request)["confirm"]
        guard confirm == nil || confirm == "true" || confirm == "false" else {
            throw Problem.validation(field: "confirm", "must be true or false")
        }
        try await challenges.delete(id, confirmed: confirm == "true", caller: caller, trace: context.trace)
        return .noContent
    }

    @Sendable func invite(request: Request, context: SurgeRequestContext) async throws -> EditedResponse<InvitationResult> {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        let body = try await request.decode(as: InvitationRequest.self, context: context)
        return EditedResponse(status: .created, response: try await challenges.invite(id, body, caller: caller, trace: context.trace))
    }

    @Sendable func like(request: Request, context: SurgeRequestContext) async throws -> LikeState {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        return try await challenges.setLike(id, liked: true, caller: caller, trace: context.trace)
    }

    @Sendable func unlike(request: Request, context: SurgeRequestContext) async throws -> LikeState {
        let caller = try context.caller()
        let id = try request.uuidParameter("challengeID", context: context)
        return try await challenges.setLike(id, liked: false, caller: caller, trace: context.trace)
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
        return try await challenges.mine(kind: kind, page: try PageRequest<SequencePosition>(request), caller: caller)
    }

    @Sendable func chores(request: Request, context: SurgeRequestContext) async throws -> Page<ChallengeSummary> {
        let caller = try context.caller()
        let groupID = try request.uuidParameter("groupID", context: context)
        return try await challenges.chores(groupID: groupID, page: try PageRequest<SequencePosition>(request), caller: caller)
    }
}
