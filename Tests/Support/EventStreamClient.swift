import AsyncHTTPClient
import Foundation
import NIOCore

/// A Server-Sent Events client for tests: connects, parses `text/event-stream` as it arrives, and keeps every event
/// (and heartbeat comment) for the test to wait on.
public final class EventStreamClient: Sendable {
    public struct Event: Sendable, CustomStringConvertible {
        public var id: String?
        public var name: String
        public var data: String
        public var arrivedAt: ContinuousClock.Instant

        public var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]) ?? [:] }
        public var description: String { "\(name)#\(id ?? "-") \(data.prefix(120))" }
    }

    private let received = LockedValue<[Event]>([])
    private let comments = LockedValue<Int>(0)
    private let ended = LockedValue<Bool>(false)
    private let task = LockedValue<Task<Void, Never>?>(nil)
    public let status: Int

    private init(status: Int) {
        self.status = status
    }

    /// Opens `url` (GET) with `headers`; returns once the response head arrived.
    public static func connect(_ url: String, headers: [(String, String)] = []) async throws -> EventStreamClient {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "text/event-stream")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        let response = try await HTTPClient.shared.execute(request, deadline: .now() + .minutes(30))
        let client = EventStreamClient(status: Int(response.status.code))
        let reader = Task {
            var parser = Parser()
            do {
                for try await buffer in response.body {
                    for event in parser.feed(String(buffer: buffer)) {
                        if event.name == ":comment" { client.comments.withLock { $0 += 1 } } else { client.received.withLock { $0.append(event) } }
                    }
                }
            } catch {}
            client.ended.withLock { $0 = true }
        }
        client.task.withLock { $0 = reader }
        return client
    }

    public var events: [Event] { received.value }
    public var heartbeats: Int { comments.value }
    public var hasEnded: Bool { ended.value }

    /// The first event (in arrival order) matching `predicate`, waiting for it until the deadline.
    @discardableResult
    public func waitFor(_ what: String, timeout: Duration = .seconds(20), _ predicate: @escaping (Event) -> Bool) async throws -> Event {
        try await eventually("stream event: \(what) (received \(events.map(\.description)))", timeout: timeout, every: .milliseconds(5)) {
            events.first(where: predicate)
        }
    }

    public func waitUntilEnded(timeout: Duration = .seconds(20)) async throws {
        try await waitUntil("the stream ended", timeout: timeout) { hasEnded }
    }

    public func close() {
        task.value?.cancel()
    }

    deinit { task.value?.cancel() }

    /// `text/event-stream` framing: fields up to a blank line make an event; comments count as heartbeats.
    struct Parser {
        private var pending = ""
        private var id: String?
        private var name: String?
        private var data: [String] = []

        mutating func feed(_ text: String) -> [Event] {
            pending += text
            var events: [Event] = []
            while let newline = pending.firstIndex(of: "\n") {
                let line = String(pending[..<newline]).trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
                pending = String(pending[pending.index(after: newline)...])
                if line.isEmpty {
                    if !data.isEmpty || name != nil {
                        events.append(Event(id: id, name: name ?? "message", data: data.joined(separator: "\n"), arrivedAt: .now))
                    }
                    id = nil
                    name = nil
                    data = []
                } else if line.hasPrefix(":") {
                    events.append(Event(id: nil, name: ":comment", data: String(line.dropFirst()), arrivedAt: .now))
                } else {
                    let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                    let field = String(parts[0])
                    var value = parts.count > 1 ? String(parts[1]) : ""
                    if value.hasPrefix(" ") { value.removeFirst() }
                    switch field {
                    case "id": id = value
                    case "event": name = value
                    case "data": data.append(value)
                    default: break
                    }
                }
            }
            return events
        }
    }
}
