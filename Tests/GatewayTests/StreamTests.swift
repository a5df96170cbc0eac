import Foundation
import GatewayDomain
import SurgeContracts
import SurgeTestSupport
import Testing

@testable import GatewayService

@Suite("Stream: framing, journal, coalescing and slow clients", .tags(.unit), .kind(.unit))
struct StreamTests {
    let alice = UUID()
    let household = UUID()

    func event(_ id: String, _ topic: StreamTopic, board: String? = nil, name: String = "chore") -> StreamEvent {
        StreamEvent(id: id, name: board == nil ? name : "board", data: #"{"n":"\#(id)"}"#, topic: topic, coalescingKey: board)
    }

    @Test("Server-Sent Events framing: id, event, one data line per line; comments and retry")
    func framing() {
        #expect(ServerSentEvent(id: "p-1-7", name: "chore", data: "{\"a\":1}").encoded == "event: chore\nid: p-1-7\ndata: {\"a\":1}\n\n")
        #expect(ServerSentEvent(data: "one\ntwo").encoded == "data: one\ndata: two\n\n")
        #expect(ServerSentEvent(id: "a\nb", name: "x\r", data: "").encoded == "event: x\nid: ab\ndata: \n\n", "a field cannot break a line")
        #expect(ServerSentEvent.comment("heartbeat") == ": heartbeat\n\n")
        #expect(ServerSentEvent.retry(milliseconds: 2000) == "retry: 2000\n\n")
    }

    @Test("boards a client names: group and challenge (competition) by UUID, nothing else")
    func boards() {
        let id = UUID()
        #expect(StreamTopic(board: "group:\(id.uuidString)") == .group(id))
        #expect(StreamTopic(board: "competition:\(id.uuidString)") == .challenge(id))
        #expect(StreamTopic(board: "challenge:\(id.uuidString.lowercased())")?.description == "challenge:\(id.uuidString.lowercased())")
        for bad in ["user:\(id.uuidString)", "group:", "group:nope", "\(id.uuidString)"] {
            #expect(StreamTopic(board: Substring(bad)) == nil, "\(bad)")
        }
    }

    @Test("the journal replays a topic's events after an id, in order; an evicted or unknown id cannot be resumed")
    func journal() {
        var journal = StreamJournal<StreamEvent>(capacity: 4, maxAge: 60)
        let mine: Set<StreamTopic> = [.user(alice), .group(household)]
        journal.append(event("e1", .user(alice)), at: 0)
        journal.append(event("e2", .user(UUID())), at: 1)
        journal.append(event("e3", .group(household)), at: 2)
        journal.append(event("e4", .user(alice)), at: 3)
        #expect(journal.events(after: "e1", topics: mine, now: 3)?.map(\.id) == ["e3", "e4"])
        #expect(journal.events(after: "e4", topics: mine, now: 3)?.map(\.id) == [])
        #expect(journal.events(after: "nope", topics: mine, now: 3) == nil)
        journal.append(event("e5", .user(alice)), at: 4)
        #expect(journal.events(after: "e1", topics: mine, now: 4) == nil, "beyond the capacity")
        #expect(journal.events(after: "e2", topics: mine, now: 4)?.map(\.id) == ["e3", "e4", "e5"])
        #expect(journal.events(after: "e3", topics: mine, now: 62.5) == nil, "older than the window")
        #expect(journal.events(after: "e4", topics: mine, now: 62.5)?.map(\.id) == ["e5"])
        var many = StreamJournal<StreamEvent>(capacity: 100, maxAge: 1_000)
        for index in 0..<5_000 { many.append(event("m\(index)", .user(alice)), at: Double(index) / 10) }
        #expect(many.count == 100 && many.events(after: "m4990", topics: mine, now: 500)?.count == 9)
    }

    @Test("a board's standings go at most once a second, the latest winning; other events are never merged")
    func coalescing() {
        var queue = StreamQueue(limit: 10)
        let board = StreamTopic.group(household)
        do { let pushed = queue.push(event("b1", board, board: "group:h"), writing: false); #expect(pushed) }
        do { let pushed = queue.push(event("c1", board), writing: false); #expect(pushed) }
        var popped = queue.pop(now: 100)
        #expect(popped.events.map(\.id) == ["c1", "b1"] && popped.nextDue == nil, "the first standing goes at once")
        do { let pushed = queue.push(event("b2", board, board: "group:h"), writing: false); #expect(pushed) }
        do { let pushed = queue.push(event("b3", board, board: "group:h"), writing: false); #expect(pushed) }
        do { let pushed = queue.push(event("x1", .challenge(UUID()), board: "challenge:x"), writing: false); #expect(pushed) }
        popped = queue.pop(now: 100.4)
        #expect(popped.events.map(\.id) == ["x1"] && popped.nextDue == 101)
        popped = queue.pop(now: 100.9)
        #expect(popped.events.isEmpty)
        popped = queue.pop(now: 101)
        #expect(popped.events.map(\.id) == ["b3"] && popped.nextDue == nil && queue.isEmpty, "the latest of the second")
        do { let pushed = queue.push(event("b4", board, board: "group:h"), writing: false); #expect(pushed) }
        queue.drop(board)
        #expect(queue.isEmpty, "a revoked board leaves nothing pending")
    }

    @Test("a queue past its limit behind a write overflows instead of growing; standings never count against it")
    func overflow() {
        var queue = StreamQueue(limit: 3)
        for index in 0..<3 {
            let pushed = queue.push(event("e\(index)", .user(alice)), writing: true)
            #expect(pushed)
        }
        for index in 0..<50 {
            let pushed = queue.push(event("b\(index)", .group(household), board: "group:h"), writing: true)
            #expect(pushed)
        }
        let overflowed = !queue.push(event("e3", .user(alice)), writing: true)
        #expect(overflowed)
        let popped = queue.pop(now: 0)
        #expect(popped.events.map(\.id) == ["e0", "e1", "e2", "b49"])
    }

    @Test("a burst while the connection waits is taken whole, up to the burst limit; past it the queue overflows too")
    func burst() {
        var queue = StreamQueue(limit: 3)
        #expect(queue.burstLimit == 48)
        for index in 0..<48 {
            let pushed = queue.push(event("e\(index)", .user(alice)), writing: false)
            #expect(pushed)
        }
        let overflowed = !queue.push(event("e48", .user(alice)), writing: false)
        #expect(overflowed)
        #expect(queue.pop(now: 0).events.map(\.id) == (0..<48).map { "e\($0)" })
        #expect(queue.isEmpty)
    }

    /// Records whose value is the topic's user or group id, as `user:<id>` or `group:<id>`.
    static func route(_ recorded: StreamHub.Recorded) -> StreamEvent? {
        let text = String(decoding: recorded.value, as: UTF8.self)
        let parts = text.split(separator: ":")
        guard parts.count == 2, let id = UUID(uuidString: String(parts[1])) else { return nil }
        return StreamEvent(id: recorded.id, name: recorded.type, data: text, topic: parts[0] == "user" ? .user(id) : .group(id))
    }

    @Test("a notification reaches the user's stream once, as the inbox's; its push deliveries are not repeated there")
    func notificationsOncePerNotification() throws {
        func sent(_ channel: String) -> StreamHub.Recorded {
            let value = #"{"notificationID":"\#(UUID())","userID":"\#(alice)","kind":"badge-earned","channel":"\#(channel)","key":"k","sentAt":"2026-11-24T10:00:00Z"}"#
            return StreamHub.Recorded(id: "notifications-0-\(channel.count)", type: NotificationSent.descriptor.type, value: Data(value.utf8))
        }
        let inbox = try #require(StreamFeed.route(sent("inbox"), logger: .test("stream")))
        #expect(inbox.name == "notification")
        #expect(inbox.topic == .user(alice))
        #expect(StreamFeed.route(sent("push"), logger: .test("stream")) == nil)
    }

    func recorded(_ id: String, _ topic: StreamTopic) -> StreamHub.Recorded {
        StreamHub.Recorded(id: id, type: "chore", value: Data(topic.description.utf8))
    }

    @Test("a client resumes what happened while nobody was connected, only its own topics, in order, once")
    func resumeAcrossAGap() async throws {
        let hub = StreamHub(settings: .init(), route: Self.route)
        let topics: Set<StreamTopic> = [.user(alice), .group(household)]
        let (phone, none) = try hub.subscribe(userID: alice, topics: topics, lastEventID: nil, now: 0)
        #expect(none == nil)
        hub.record(recorded("r1", .user(alice)), now: 1)
        guard case .events(let first, _) = await phone.next(until: .now + .seconds(1)) else {
            Issue.record("r1 did not arrive")
            return
        }
        #expect(first.map(\.id) == ["r1"])
        hub.remove(phone)
        #expect(hub.connectionCount == 0)
        hub.record(recorded("r2", .group(household)), now: 2)
        hub.record(recorded("r3", .user(UUID())), now: 3)
        hub.record(recorded("r4", .user(alice)), now: 4)
        let (again, replay) = try hub.subscribe(userID: alice, topics: topics, lastEventID: "r1", now: 5)
        #expect(replay?.map(\.id) == ["r2", "r4"])
        hub.publish(try #require(Self.route(recorded("r4", .user(alice)))))
        hub.record(recorded("r5", .user(alice)), now: 6)
        guard case .events(let live, _) = await again.next(until: .now + .seconds(1)) else {
            Issue.record("r5 did not arrive")
            return
        }
        #expect(live.map(\.id) == ["r5"], "a replayed event arriving live as well is not sent twice")
        let (_, lost) = try hub.subscribe(userID: alice, topics: topics, lastEventID: "never", now: 7)
        #expect(lost == nil, "an id the journal does not hold cannot be resumed: reset")
    }

    @Test("the hub: a client that stops reading is cut off while the others keep receiving; a revoked board is told once")
    func hub() async throws {
        let hub = StreamHub(settings: .init(queueLimit: 8, connectionsPerUser: 2), route: Self.route)
        let bob = UUID()
        let (stuck, _) = try hub.subscribe(userID: alice, topics: [.user(alice), .group(household)], lastEventID: nil, now: 0)
        let (reader, _) = try hub.subscribe(userID: bob, topics: [.user(bob), .group(household)], lastEventID: nil, now: 0)
        // A burst while both wait is no reason to cut either: each takes it whole.
        for index in 0..<50 { hub.record(recorded("burst\(index)", .group(household)), now: 0) }
        #expect(stuck.closeReason == nil)
        guard case .events(let burst, _) = await reader.next(until: .now + .seconds(1)) else {
            Issue.record("the burst did not arrive")
            return
        }
        #expect(burst.count == 50)
        // The stuck client takes one write and never the next.
        guard case .events = await stuck.next(until: .now + .seconds(1)) else {
            Issue.record("the burst did not arrive at the stuck client")
            return
        }
        var received: [String] = []
        for index in 0..<20 {
            hub.record(recorded("g\(index)", .group(household)), now: Double(index))
            if case .events(let events, _) = await reader.next(until: .now + .seconds(1)) { received += events.map(\.id) }
        }
        #expect(stuck.closeReason == .tooSlow)
        #expect(received == (0..<20).map { "g\($0)" })

        hub.revoke(.group(household), from: bob)
        hub.record(recorded("after", .group(household)), now: 30)
        guard case .events(let events, let revoked) = await reader.next(until: .now + .seconds(1)) else {
            Issue.record("nothing for the reader")
            return
        }
        #expect(events.isEmpty && revoked == [.group(household)])
        hub.record(recorded("own", .user(bob)), now: 31)
        guard case .events(let own, _) = await reader.next(until: .now + .seconds(1)) else {
            Issue.record("the reader's own event did not arrive")
            return
        }
        #expect(own.map(\.id) == ["own"])
        if case .idle = await reader.next(until: .now + .milliseconds(50)) {} else { Issue.record("expected a heartbeat slot") }
        hub.remove(stuck)
        hub.remove(reader)
        #expect(hub.connectionCount == 0)
    }

    @Test("connections per user are capped; shutting down closes every connection and refuses new ones")
    func limits() throws {
        let hub = StreamHub(settings: .init(connectionsPerUser: 2), route: Self.route)
        let first = try hub.subscribe(userID: alice, topics: [.user(alice)], lastEventID: nil, now: 0).0
        _ = try hub.subscribe(userID: alice, topics: [.user(alice)], lastEventID: nil, now: 0)
        #expect(throws: StreamHub.Refusal.self) { _ = try hub.subscribe(userID: alice, topics: [.user(alice)], lastEventID: nil, now: 0) }
        hub.remove(first)
        _ = try hub.subscribe(userID: alice, topics: [.user(alice)], lastEventID: nil, now: 0)
        hub.shutDown()
        #expect(throws: StreamHub.Refusal.self) { _ = try hub.subscribe(userID: UUID(), topics: [], lastEventID: nil, now: 0) }
    }

    @Test("a replica holds at most its number of streams, whoever opens them; one closing makes room")
    func replicaLimit() throws {
        let hub = StreamHub(settings: .init(connectionsPerUser: 5, connectionsPerReplica: 3), route: Self.route)
        let first = try hub.subscribe(userID: UUID(), topics: [], lastEventID: nil, now: 0).0
        _ = try hub.subscribe(userID: UUID(), topics: [], lastEventID: nil, now: 0)
        _ = try hub.subscribe(userID: alice, topics: [.user(alice)], lastEventID: nil, now: 0)
        do {
            _ = try hub.subscribe(userID: alice, topics: [.user(alice)], lastEventID: nil, now: 0)
            Issue.record("a fourth stream was let in past the replica's three")
        } catch {
            guard case .replicaFull = error else {
                Issue.record("refused as \(error), not as a full replica")
                return
            }
        }
        hub.remove(first)
        _ = try hub.subscribe(userID: alice, topics: [.user(alice)], lastEventID: nil, now: 0)
        #expect(hub.connectionCount == 3)
    }
}
