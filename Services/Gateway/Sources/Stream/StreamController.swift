import Foundation
import GatewayDomain
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import SurgeContracts
import SurgeRuntime

/// `GET /v1/stream`: the caller's live events as Server-Sent Events, and `POST /v1/stream/tickets` for browsers.
struct StreamController: Sendable {
    let hub: StreamHub
    let tickets: any StreamTicketStore
    let authenticator: Authenticator
    let boards: BoardAccess
    let now: @Sendable () -> Date

    static let maxBoards = 20

    struct Ticket: Codable, ResponseEncodable {
        /// Pass it as `?ticket=` to `GET /v1/stream`; it opens one stream, within 60 seconds.
        var ticket: String
        var expiresAt: Date
    }

    func issueTicket(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        guard let callerID = context.callerID else { throw Problem.unauthorized() }
        let issued = try await tickets.issue(for: callerID, session: context.callerSessionID, now: now())
        var response = try context.responseEncoder.encode(Ticket(ticket: issued.ticket, expiresAt: issued.expiresAt), from: request, context: context)
        response.status = .created
        return response
    }

    func stream(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let (callerID, sessionID) = try await caller(of: request)
        var topics: Set<StreamTopic> = [.user(callerID)]
        let requested = try Self.boards(in: request)
        for board in requested {
            guard try await boards.maySee(board, callerID: callerID, requestID: context.requestID) else {
                throw Problem.notFound("No board \(board) that you may see.")
            }
        }
        topics.formUnion(requested)
        let lastEventID = request.headers[.lastEventID]
        let subscription: (Subscriber, replay: [StreamEvent]?)
        do {
            subscription = try hub.subscribe(userID: callerID, sessionID: sessionID, topics: topics, lastEventID: lastEventID, now: StreamClock.now())
        } catch {
            switch error {
            case .tooManyConnections(let limit):
                throw Problem(
                    slug: "too-many-streams", title: "Too many streams", status: .tooManyRequests,
                    detail: "At most \(limit) streams per account on one server; close one first.", retryAfter: 5)
            case .replicaFull:
                throw Problem.unavailable("This server holds as many streams as it may; reconnect in a few seconds.", retryAfter: 5)
            case .shuttingDown:
                throw Problem.unavailable("This server is shutting down; reconnect.")
            }
        }
        let (subscriber, replay) = subscription
        // Revoked between the token check and the subscription, the session's streams were ended without this one.
        if let sessionID, authenticator.revocations.isRevoked(session: sessionID) {
            hub.remove(subscriber)
            throw Authenticator.invalidToken
        }
        let hub = self.hub
        // A client that goes away frees its slot now, not when the next heartbeat fails to reach it.
        let departure = ClientDeparture(subscriber: subscriber)
        let channel = context.channel
        try? await channel.pipeline.addHandler(departure, position: .first).get()
        channel.closeFuture.whenComplete { _ in subscriber.close(.clientGone) }
        let heartbeat = Duration.seconds(hub.settings.heartbeatSeconds)
        let ready = ReadyEvent(userID: callerID.key, boards: requested.map(\.description).sorted(), heartbeatSeconds: Int(hub.settings.heartbeatSeconds))
        var opening = ServerSentEvent.retry(milliseconds: 2000)
        if lastEventID != nil {
            if let replay {
                opening += replay.map(\.serverSentEvent.encoded).joined()
            } else {
                opening += ServerSentEvent(name: "reset", data: #"{"reason":"The events after Last-Event-ID are no longer kept: refetch what you show."}"#).encoded
            }
        }
        opening += ServerSentEvent(name: "ready", data: Self.json(ready)).encoded
        let logger = context.logger
        let body = ResponseBody { [opening] writer in
            defer {
                hub.remove(subscriber)
                channel.pipeline.removeHandler(departure, promise: nil)
            }
            do {
                try await writer.write(ByteBuffer(string: opening))
                try await Self.cutOffWhenTooSlow(subscriber) {
                    try await withGracefulShutdownHandler {
                        try await Self.pump(subscriber, heartbeat: heartbeat, into: &writer)
                    } onGracefulShutdown: {
                        subscriber.close(.shuttingDown)
                    }
                }
                try await writer.finish(nil)
                logger.debug("Stream ended", metadata: ["reason": "\(subscriber.closeReason.map { "\($0)" } ?? "-")"])
            } catch {
                logger.debug("Stream cut", metadata: ["reason": "\(subscriber.closeReason.map { "\($0)" } ?? "-")", "error": "\(error)"])
                throw error
            }
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", .init("X-Accel-Buffering")!: "no"],
            body: body)
    }

    /// Sends what is due, heartbeats when nothing is, until the subscriber is closed.
    private static func pump(_ subscriber: Subscriber, heartbeat: Duration, into writer: inout any ResponseBodyWriter) async throws {
        while true {
            switch await subscriber.next(until: .now + heartbeat) {
            case .events(let events, let revoked):
                var text = events.map(\.serverSentEvent.encoded).joined()
                for topic in revoked {
                    text += ServerSentEvent(name: "unsubscribed", data: Self.json(Unsubscribed(board: topic.description))).encoded
                }
                try await writer.write(ByteBuffer(string: text))
            case .idle:
                try await writer.write(ByteBuffer(string: ServerSentEvent.comment("heartbeat")))
            case .closed(.shuttingDown):
                try await writer.write(ByteBuffer(string: ServerSentEvent(name: "shutdown", data: #"{"reason":"This server is shutting down: reconnect (with Last-Event-ID)."}"#).encoded))
                return
            case .closed(.accountDeleted), .closed(.clientGone):
                return
            case .closed(.sessionRevoked):
                try await writer.write(ByteBuffer(string: ServerSentEvent(name: "session-ended", data: #"{"reason":"This session was signed out: sign in again."}"#).encoded))
                return
            case .closed(.tooSlow):
                throw StreamCut()
            }
        }
    }

    struct StreamCut: Error {}

    /// Closes the subscriber when the client closes its side of the connection (the server allows half-closed
    /// connections, so the channel itself stays open until the response ends): a stream's client sends nothing after
    /// its request, so the end of its input means it has gone.
    final class ClientDeparture: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = NIOAny

        let subscriber: Subscriber

        init(subscriber: Subscriber) {
            self.subscriber = subscriber
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? ChannelEvent, event == .inputClosed { subscriber.close(.clientGone) }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Runs `body`, cancelling it if the subscriber falls too far behind while a write is stuck on a client that has
    /// stopped reading: the connection is cut rather than its queue allowed to grow.
    private static func cutOffWhenTooSlow(_ subscriber: Subscriber, _ body: () async throws -> Void) async throws {
        let task = withUnsafeCurrentTask { $0 }
        let watchdog = Task {
            while !Task.isCancelled {
                if subscriber.closeReason == .tooSlow {
                    task?.cancel()
                    return
                }
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
        defer { watchdog.cancel() }
        try await body()
    }

    private struct ReadyEvent: Encodable {
        var userID: String
        var boards: [String]
        var heartbeatSeconds: Int
    }

    private struct Unsubscribed: Encodable {
        var board: String
    }

    private static func json(_ value: some Encodable) -> String {
        String(decoding: (try? SurgeJSON.apiEncode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// The bearer token's user and session, else the ticket's.
    private func caller(of request: Request) async throws -> (userID: UUID, sessionID: UUID?) {
        if request.headers[.authorization] != nil {
            let caller = try await authenticator.caller(of: request)
            return (caller.id, caller.sessionID)
        }
        guard let ticket = request.uri.queryParameters["ticket"].map(String.init), !ticket.isEmpty else { throw Problem.unauthorized() }
        guard let redeemed = try await tickets.redeem(ticket, now: now()), !authenticator.revocations.isErased(redeemed.userID),
            !(redeemed.sessionID.map(authenticator.revocations.isRevoked(session:)) ?? false)
        else {
            throw Problem(
                slug: "invalid-stream-ticket", title: "Invalid stream ticket", status: .unauthorized,
                detail: "The stream ticket is unknown, used or expired: ask for a new one.")
        }
        return redeemed
    }

    static func boards(in request: Request) throws -> [StreamTopic] {
        guard let text = request.uri.queryParameters["boards"].map(String.init), !text.isEmpty else { return [] }
        let parts = text.split(separator: ",")
        guard parts.count <= maxBoards else { throw Problem.validation(field: "boards", "at most \(maxBoards) boards") }
        var topics: [StreamTopic] = []
        for part in parts {
            guard let topic = StreamTopic(board: part) else {
                throw Problem.validation(field: "boards", "`\(part)` is not a board: give group:<groupID> or challenge:<challengeID>")
            }
            if !topics.contains(topic) { topics.append(topic) }
        }
        return topics
    }
}

/// Whether a user may see a board: the leaderboard, which owns the answer, is asked as that user.
struct BoardAccess: Sendable {
    let upstreams: Upstreams
    let signer: InternalCallSigner

    func maySee(_ board: StreamTopic, callerID: UUID, requestID: String) async throws -> Bool {
        let target: String
        switch board {
        case .group(let id): target = "/v1/leaderboards/groups/\(id.key)?limit=1"
        case .challenge(let id): target = "/v1/leaderboards/challenges/\(id.key)?limit=1"
        case .user(let id): return id == callerID
        }
        var request = UpstreamClient.Request(target: target)
        signer.sign(&request.headers, target: target, caller: callerID, requestID: requestID)
        let response: UpstreamClient.Response
        do {
            response = try await upstreams.execute(request, to: .leaderboard, timeout: .seconds(10))
        } catch {
            throw Problem.unavailable("The leaderboard cannot say right now whether you may see \(board).")
        }
        switch response.status.code {
        case 200: return true
        case 403, 404: return false
        default: throw Problem.unavailable("The leaderboard cannot say right now whether you may see \(board).")
        }
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}
