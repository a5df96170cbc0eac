import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOFoundationCompat
import PostgresNIO
import SurgePostgres

/// Idempotency end to end: the gateway checks a client's `Idempotency-Key` and forwards it (`X-Surge-Idempotency-Key`,
/// signed), since only the service can know whether a request whose connection broke was committed: here a keyed
/// request runs in one `SharedTransaction`: the
/// command's writes (all of its transactions) and the row recording its answer in `request_keys` commit together or
/// not at all. A retry with the same key (and the same method, target and body) gets that answer, with
/// `Idempotent-Replayed: true`; another request with the key gets 409 `idempotency-key-reused`, as at the gateway.
///
/// The answer row is written last, in one statement (`INSERT ... ON CONFLICT DO NOTHING`), so a first request costs
/// one statement more than it did. A retry runs the command again and finds the row taken when it tries to write it:
/// it rolls back and answers what was stored. A concurrent duplicate waits on the first's uncommitted row, then does
/// the same; one whose command failed on the first's effects (a unique violation) looks for the stored answer, runs
/// once more if there is none, and answers 409 `idempotency-key-in-progress` rather than a 500 if that fails again.
///
/// Only answers below 500 that the handler returned are recorded; a thrown error or a 5xx rolls the whole command back.
/// At most one fewer keyed requests than the pool has connections run at once, since a handler may still read on a
/// second connection while it holds the shared one.
public struct IdempotentRequestMiddleware<Context: RequestContext>: RouterMiddleware {
    let store: RequestKeyStore
    let permits: Permits
    let scope: @Sendable (Context) -> String?
    let key: @Sendable (Context) -> String?

    public init(
        client: PostgresClient, connections: Int, logger: Logger, key: @escaping @Sendable (Context) -> String?,
        scope: @escaping @Sendable (Context) -> String?
    ) {
        store = RequestKeyStore(client: client, logger: logger)
        permits = Permits(max(1, connections - 1))
        self.key = key
        self.scope = scope
    }

    /// The largest keyed body read into memory; the gateway's caps are far below it.
    static var maxBody: Int { 16 << 20 }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let key = key(context), let scope = scope(context) else { return try await next(request, context) }
        var request = request
        // Collected once, so that a second run reads it again.
        let body = try await request.collectBody(upTo: Self.maxBody)
        let fingerprint = Self.fingerprint(method: request.method.rawValue, target: request.head.path ?? "", body: body)
        let requestKey = RequestKeyStore.Key(scope: scope, key: key, fingerprint: fingerprint)
        await permits.acquire()
        do {
            let response = try await answer(requestKey, context: context) { try await next(request, context) }
            await permits.release()
            return response
        } catch {
            await permits.release()
            throw error
        }
    }

    private func answer(_ requestKey: RequestKeyStore.Key, context: Context, next: () async throws -> Response) async throws -> Response {
        var rerun = false
        while true {
            switch try await store.run(requestKey, logger: context.logger, handler: next) {
            case .answered(let response):
                return response
            case .taken:
                if let answer = try await store.stored(requestKey) { return try answer.response() }
                // Taken, then gone: the first request's row was purged between the two statements.
                throw RequestKeyStore.inProgress
            case .failed(let error):
                if let answer = try await store.stored(requestKey) { return try answer.response() }
                // Beaten by a concurrent request (the same key, or the same resource under another): run again, now
                // that its effects are visible.
                let lostRace = error.isUniqueViolation || error.sqlState == "25P02" || error is SharedTransactionFailed
                guard lostRace else { throw error }
                guard !rerun else { throw RequestKeyStore.inProgress }
                rerun = true
            }
        }
    }

    /// What makes two requests "the same" for a key: method, target (query and all) and body. A JSON body is compared
    /// by meaning, not bytes: a retry may serialize its keys in another order (a dictionary, after the app restarted).
    static func fingerprint(method: String, target: String, body: ByteBuffer) -> Data {
        var hash = SHA256()
        hash.update(data: Data(method.utf8))
        hash.update(data: Data([0x0A]))
        hash.update(data: Data(target.utf8))
        hash.update(data: Data([0x0A]))
        hash.update(data: canonical(Data(buffer: body)))
        return Data(hash.finalize())
    }

    /// JSON with its object keys sorted; anything else as it is.
    static func canonical(_ body: Data) -> Data {
        guard !body.isEmpty, let object = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
            let sorted = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return body }
        return sorted
    }
}

extension IdempotentRequestMiddleware where Context == SurgeRequestContext {
    /// Keys scoped as the gateway scopes them: to the caller, or for a signed-out request to the client's address.
    public init(client: PostgresClient, connections: Int, logger: Logger) {
        self.init(
            client: client, connections: connections, logger: logger, key: { $0.idempotencyKey },
            scope: { context in
                if let caller = context.callerID { return "user:\(caller.key)" }
                return context.clientAddress.map { "anonymous:\($0)" }
            })
    }
}

/// `request_keys`: the first answer to each keyed request, written in the request's shared transaction.
struct RequestKeyStore: Sendable {
    struct Key: Sendable {
        var scope: String
        var key: String
        var fingerprint: Data
    }

    struct Answer: Sendable {
        var matches: Bool
        var status: Int
        var contentType: String?
        var location: String?
        var body: ByteBuffer

        func response() throws -> Response {
            guard matches else { throw RequestKeyStore.reused }
            var headers: HTTPFields = [.idempotentReplayed: "true", .contentLength: String(body.readableBytes)]
            if let contentType { headers[.contentType] = contentType }
            if let location { headers[.location] = location }
            return Response(status: HTTPResponse.Status(code: status), headers: headers, body: .init(byteBuffer: body))
        }
    }

    enum Outcome {
        /// Committed with its answer recorded, or not to be recorded (a 5xx, nothing committed).
        case answered(Response)
        /// Another request with the key committed first; nothing of this one was.
        case taken
        /// Nothing committed.
        case failed(any Error)
    }

    static let reused = Problem(
        slug: "idempotency-key-reused", title: "Idempotency key reused", status: .conflict,
        detail: "This Idempotency-Key was used for a different request; use a new key for a new request.")
    static let inProgress = Problem(
        slug: "idempotency-key-in-progress", title: "Request in progress", status: .conflict,
        detail: "A request with this Idempotency-Key is still running.", retryAfter: 1)

    let client: PostgresClient
    let logger: Logger

    /// Runs `handler` in one shared transaction and records its answer in it.
    func run(_ key: Key, logger: Logger, handler: () async throws -> Response) async throws -> Outcome {
        try await client.withConnection { connection in
            try connection.ensureOpen()
            try await connection.query("BEGIN", logger: logger)
            let shared = SharedTransaction(client: client, connection: connection)
            func rollBack() async {
                shared.end()
                if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
                shared.rolledBack()
            }
            let response: Response
            do {
                response = try await SharedTransaction.$current.withValue(shared) { try await handler() }
            } catch {
                await rollBack()
                return .failed(error)
            }
            guard response.status.code < 500, response.headers[.retryAfter] == nil else {
                await rollBack()
                return .answered(response)
            }
            shared.end()
            if shared.failed {
                // A joined transaction failed and the handler answered anyway: what it believed committed was not.
                await rollBack()
                return .failed(SharedTransactionFailed())
            }
            var answered = response
            do {
                let body = try await answered.collectBody()
                let inserted = try await connection.query(
                    """
                    INSERT INTO request_keys (scope, key, fingerprint, status, content_type, location, body)
                    VALUES (\(key.scope), \(key.key), \(ByteBuffer(data: key.fingerprint)), \(response.status.code),
                            \(response.headers[.contentType]), \(response.headers[.location]), \(body))
                    ON CONFLICT DO NOTHING RETURNING 1
                    """, logger: logger
                ).collect()
                guard !inserted.isEmpty else {
                    await rollBack()
                    return .taken
                }
                try connection.ensureOpen()
                try await connection.query("COMMIT", logger: logger)
            } catch {
                await rollBack()
                return .failed(error)
            }
            shared.committed()
            return .answered(answered)
        }
    }

    func stored(_ key: Key) async throws -> Answer? {
        let rows = try await client.query(
            """
            SELECT fingerprint, status, content_type, location, body FROM request_keys WHERE scope = \(key.scope) AND key = \(key.key)
            """, logger: logger)
        for try await (fingerprint, status, contentType, location, body) in rows.decode((ByteBuffer, Int, String?, String?, ByteBuffer).self) {
            return Answer(
                matches: fingerprint == ByteBuffer(data: key.fingerprint), status: status, contentType: contentType, location: location, body: body)
        }
        return nil
    }

    /// Forgets answers older than a day, as the gateway does.
    func purge() async throws {
        try await client.query("DELETE FROM request_keys WHERE created_at < now() - interval '1 day'", logger: logger)
    }
}

/// At most `limit` holders at once; the others wait in turn.
actor Permits {
    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ limit: Int) { available = limit }

    func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            available += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

extension HTTPField.Name {
    static let idempotentReplayed = Self("Idempotent-Replayed")!
}

/// A transaction joined to the request's shared transaction failed, and the handler answered anyway.
struct SharedTransactionFailed: Error, CustomStringConvertible {
    var description: String { "a transaction joined to the request's shared transaction failed" }
}
