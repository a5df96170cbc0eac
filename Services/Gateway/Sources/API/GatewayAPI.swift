import SurgeContracts
import SurgeRuntime

/// Public operations the gateway answers itself.
enum GatewayAPI {
    static let export = APIOperation(
        .get, "/v1/me/export", id: "exportMyData", service: .gateway,
        summary: "Everything Surge keeps about the caller, from every service, as one JSON document (GDPR access).",
        response: ExportController.ExportDocument.self)

    static let streamTicket = APIOperation(
        .post, "/v1/stream/tickets", id: "createStreamTicket", service: .gateway,
        summary: "A ticket that opens one stream within 60 seconds, for a browser's EventSource (which cannot send an Authorization header): "
            + "GET /v1/stream?ticket=...",
        status: .created, response: StreamController.Ticket.self, idempotent: false)

    static let stream = APIOperation(
        .get, "/v1/stream", id: "streamEvents", service: .gateway,
        summary: "The caller's live events as Server-Sent Events (text/event-stream), authenticated by the bearer token or a stream ticket. "
            + "Always the caller's own: " + StreamFeed.ownEventNames.joined(separator: ", ")
            + "; with `boards`, each board's standings (`board`, at most one per board per second, the latest winning; `board-closed`) and, "
            + "for a group, its chores (`chore`, `challenge-changed`). Each event's `data` is the public event's JSON (docs/events) and its "
            + "`id` may be sent back as `Last-Event-ID` on reconnecting, to get what was missed in the last 5 minutes, in order; older, "
            + "`event: reset` says to refetch. Also `ready` (subscribed), `unsubscribed` (no longer a member), `shutdown` (reconnect), "
            + "`session-ended` (the token's session was signed out: the stream ends; sign in again), and a `: heartbeat` comment every 15 seconds. A client that stops reading is disconnected.",
        access: .anonymous,
        query: [
            .init(
                "boards", "Comma-separated boards to follow, at most 20: `group:<groupID>` (its board and its chores) or `challenge:<challengeID>`; "
                    + "each must be one the caller may see (404 otherwise).",
                schema: JSONSchema.string().refined(.init(
                    pattern: "^((group|challenge):[0-9a-fA-F-]{36})(,(group|challenge):[0-9a-fA-F-]{36}){0,19}$",
                    example: "group:0b6f0e43-4f1c-4c5a-9d4e-2f8f4d1f7a11"))),
            .init("ticket", "A stream ticket (POST /v1/stream/tickets), instead of an Authorization header."),
        ],
        responseMediaTypes: ["text/event-stream"], problems: [.tooManyStreams, .invalidStreamTicket, .unauthorized, .invalidToken, .notFound])

    static let all = [export, streamTicket, stream]
}

extension ExportController.ExportDocument: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = ["userID": .init(schema: .string(format: "uuid"))]
}
