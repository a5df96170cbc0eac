import Foundation
import LeaderboardDomain
import SurgeContracts
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import LeaderboardService

/// The views that write their own JSON (`JSONWritable`) write exactly what `SurgeJSONWriter` writes for them through
/// `Encodable`: the same keys in the same order, numbers, instants, escapes and omitted nils.
@Suite("Board views' JSON", .tags(.unit), .kind(.unit))
struct BoardViewsJSONTests {
    static let names = ["Ann", "", "Zoë \"the\" \\ best", "line\nbreak\ttab\u{1}", "李雷 🙂", "a/b <script>", "e\u{301}mile"]
    static let scores: [Double] = [0, -0.0, 1, 2.5, 0.1 + 0.2, 1e12, 1e21, -3.75, 123_456_789.125, 5e-324, .greatestFiniteMagnitude, 1e15 - 1, -(1e15 - 1), 1e15, 9_007_199_254_740_993, 1e16, -7, 42.000001,
    ]

    static func window(_ index: Int) -> WindowView {
        let start = Date(timeIntervalSince1970: 1_795_000_000 + Double(index) * 86_400.5)
        return index % 3 == 0
            ? WindowView(key: "all-time", kind: .allTime, timeZone: "UTC", startsAt: nil, endsAt: nil, nextResetAt: nil, closed: false)
            : WindowView(
                key: "2026-W\(40 + index)", kind: index % 2 == 0 ? .week : .month, timeZone: "Asia/Tokyo", startsAt: start,
                endsAt: start.addingTimeInterval(604_800.25), nextResetAt: index % 2 == 0 ? start.addingTimeInterval(604_800) : nil,
                closed: index % 4 == 1)
    }

    static func page(_ index: Int) -> BoardPageView {
        let items = (0..<(index % 5)).map { item in
            StandingView(
                rank: item + 1, userID: UUID(), displayName: names[(index + item) % names.count],
                avatarURL: item % 2 == 0 ? nil : "https://cdn.example/a/\(item).png?s=64&q=\"x\"", score: scores[(index + item) % scores.count],
                leader: item == 0, isCaller: item == 1)
        }
        return BoardPageView(
            board: BoardInfo(scope: index % 2 == 0 ? .challenge : .group, id: UUID(), name: names[index % names.count], measure: index % 3 == 0 ? "litres" : "points"),
            window: window(index), items: items, nextCursor: index % 2 == 0 ? nil : Cursor.encode(BoardCursor(position: index, userID: UUID())),
            me: me(index))
    }

    static func me(_ index: Int) -> MyStandingView {
        index % 4 == 0
            ? MyStandingView(rank: nil, score: 0, topPercent: nil, participants: index)
            : MyStandingView(rank: index, score: scores[index % scores.count], topPercent: min(100, index * 7), participants: 1_000_000 + index)
    }

    @Test("Pages and standings: the bytes SurgeJSONWriter writes through Encodable", arguments: 0..<24)
    func sameBytes(index: Int) throws {
        let writer = SurgeJSONWriter(instants: .wholeSeconds)
        let page = Self.page(index)
        #expect(String(decoding: try writer.write(page), as: UTF8.self) == String(decoding: try writer.encode(page), as: UTF8.self))
        let me = Self.me(index)
        #expect(try writer.write(me) == writer.encode(me))
    }

    @Test("A board cursor: the bytes JSONEncoder writes for it")
    func cursor() throws {
        for position in [0, 7, 1_000_000, Int(Int32.max)] {
            let cursor = BoardCursor(position: position, userID: UUID())
            #expect(Cursor.encode(cursor) == Base64URL.encode(try SurgeJSON.encoder().encode(cursor)))
            let decoded = try #require(Cursor.decode(BoardCursor.self, from: Cursor.encode(cursor)))
            #expect(decoded.position == position && decoded.userID == cursor.userID)
        }
    }

    @Test("A score JSON cannot hold throws, as through Encodable")
    func nonFiniteScores() {
        let writer = SurgeJSONWriter(instants: .wholeSeconds)
        for score in [Double.nan, .infinity, -.infinity] {
            var page = Self.page(3)
            page.items[0].score = score
            #expect(throws: EncodingError.self) { try writer.write(page) }
            #expect(throws: EncodingError.self) { try writer.encode(page) }
        }
    }
}
