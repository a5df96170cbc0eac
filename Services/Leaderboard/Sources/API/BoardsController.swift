import Foundation
import Hummingbird
import LeaderboardDomain
import SurgeContracts
import SurgeRuntime

/// The leaderboard's routes over `BoardQueries`.
struct BoardsController {
    let queries: BoardQueries

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(LeaderboardAPI.list) { _, context in
            try await queries.list(caller: try context.caller())
        }
        addBoardRoutes(to: router, board: LeaderboardAPI.challengeBoard, me: LeaderboardAPI.challengeMe, around: LeaderboardAPI.challengeAround,
                       history: LeaderboardAPI.challengeHistory) { request, context, caller in
            try await queries.challenge(try request.uuidParameter("challengeID", context: context), caller: caller)
        }
        addBoardRoutes(to: router, board: LeaderboardAPI.groupBoard, me: LeaderboardAPI.groupMe, around: LeaderboardAPI.groupAround,
                       history: LeaderboardAPI.groupHistory) { request, context, caller in
            try await queries.group(try request.uuidParameter("groupID", context: context), caller: caller)
        }
        router.add(LeaderboardAPI.challengeFriends) { request, context in
            let caller = try context.caller()
            let visible = try await queries.challenge(try request.uuidParameter("challengeID", context: context), caller: caller)
            let (window, view) = try queries.window(request.uri.queryParameters["window"].map(String.init), for: visible)
            return try await queries.friends(visible, window: window, view: view, caller: caller)
        }
        router.get("/internal/export") { _, context in
            try await queries.export(userID: try context.caller())
        }
    }

    private func addBoardRoutes(
        to router: Router<SurgeRequestContext>, board: APIOperation, me: APIOperation, around: APIOperation, history: APIOperation,
        visible: @escaping @Sendable (Request, SurgeRequestContext, UUID) async throws -> BoardQueries.Visible
    ) {
        let queries = self.queries
        router.add(board) { request, context in
            let caller = try context.caller()
            let query = request.uri.queryParameters
            let page = try PageRequest<BoardCursor>(query: query)
            // Issued cursors hold a position on the board, from 0; any other came from elsewhere (and would overflow).
            if let cursor = page.after, !(0..<Int(Int32.max)).contains(cursor.position) { throw Problem.unknownCursor() }
            let board = try await visible(request, context, caller)
            let (window, view) = try queries.window(query["window"].map(String.init), for: board)
            return try await queries.page(board, window: window, view: view, caller: caller, limit: page.limit, after: page.after, around: false)
        }
        router.add(around) { request, context in
            let caller = try context.caller()
            let query = request.uri.queryParameters
            let page = try PageRequest<BoardCursor>(query: query)
            let board = try await visible(request, context, caller)
            let (window, view) = try queries.window(query["window"].map(String.init), for: board)
            return try await queries.page(board, window: window, view: view, caller: caller, limit: page.limit, after: nil, around: true)
        }
        router.add(me) { request, context in
            let caller = try context.caller()
            let board = try await visible(request, context, caller)
            let window = try queries.windowKey(request.uri.queryParameters["window"].map(String.init), for: board)
            return try await queries.me(board, window: window, caller: caller)
        }
        router.add(history) { request, context in
            let caller = try context.caller()
            let page = try PageRequest<String>(request)
            let kind: WindowKind
            switch request.uri.queryParameters["kind"].map(String.init) ?? "week" {
            case "week": kind = .week
            case "month": kind = .month
            default: throw Problem.validation(field: "kind", "must be week or month")
            }
            let board = try await visible(request, context, caller)
            return try await queries.history(board, kind: kind, caller: caller, page: page)
        }
    }
}
