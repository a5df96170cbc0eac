import Foundation
import Hummingbird
import HummingbirdCore
import SurgeContracts

/// One page of a list. `nextCursor` is absent on the last page. Cursors are opaque to clients and stable under
/// inserts: they encode the sort key of the last item, not an offset.
public struct Page<Item: Codable & Sendable>: Codable, Sendable, ResponseEncodable {
    public var items: [Item]
    public var nextCursor: String?

    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

/// A page request: how many items, and where the previous page ended.
public struct PageRequest<Position: Codable & Sendable>: Sendable {
    public static var defaultLimit: Int { 20 }
    public static var maximumLimit: Int { 100 }

    public var limit: Int
    public var after: Position?

    /// Reads `limit` and `cursor` from the query: a malformed `limit` is a validation problem naming it; a cursor this
    /// API did not issue is 400 `unknown-cursor`. An empty `cursor` means the first page, as an absent one does.
    public init(_ request: Request) throws {
        try self.init(query: request.uri.queryParameters)
    }

    /// The same from a query already parsed (`request.uri.queryParameters` parses it again on every use).
    public init(query: FlatDictionary<Substring, Substring>) throws {
        if let text = query["limit"].map(String.init) {
            guard let limit = Int(text), (1...Self.maximumLimit).contains(limit) else {
                throw Problem.validation(field: "limit", "must be an integer from 1 to \(Self.maximumLimit)")
            }
            self.limit = limit
        } else {
            self.limit = Self.defaultLimit
        }
        if let cursor = query["cursor"].map(String.init), !cursor.isEmpty {
            guard let position = Cursor.decode(Position.self, from: cursor) else {
                throw Problem.unknownCursor()
            }
            after = position
        } else {
            after = nil
        }
    }

    public init(limit: Int, after: Position?) {
        self.limit = limit
        self.after = after
    }

    /// Builds the page from up to `limit + 1` fetched rows: the extra row only says whether there is more.
    public func page<Item: Codable & Sendable>(_ fetched: [Item], position: (Item) -> Position) -> Page<Item> {
        let items = Array(fetched.prefix(limit))
        let next = fetched.count > limit ? items.last.map { Cursor.encode(position($0)) } : nil
        return Page(items: items, nextCursor: next)
    }
}

/// Opaque cursors: base64url of the JSON of a sort position.
///
/// A position's instants are kept exactly (the `Date`'s own value, finer than PostgreSQL's microseconds), not as
/// millisecond text: the next page asks for rows before (or after) the last one's instant, and a truncated instant
/// would skip the rows of that last millisecond (newest first) or repeat the last row (oldest first).
public enum Cursor {
    public static func encode(_ position: some Encodable) -> String {
        let encoder = SurgeJSON.encoder()
        encoder.dateEncodingStrategy = .deferredToDate
        return Base64URL.encode((try? encoder.encode(position)) ?? Data())
    }

    /// A position that writes its own JSON (one without instants): the same bytes, without `JSONEncoder`.
    public static func encode(_ position: some JSONWritable) -> String {
        Base64URL.encode(Data((try? SurgeJSONWriter(instants: .milliseconds).write(position)) ?? []))
    }

    /// Nil for text that is not a position of `type`, including one with a U+0000 in any string: PostgreSQL cannot
    /// compare text with it, so a forged position would fail its query instead of naming no row.
    public static func decode<Position: Decodable>(_ type: Position.Type, from text: String) -> Position? {
        guard let data = Base64URL.decode(text),
            let json = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            StrictJSONDecoder.stringsWithNUL(in: json, path: "").isEmpty
        else { return nil }
        let decoder = SurgeJSON.decoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            // Cursors issued before instants were kept exactly carry them as text.
            let date = try (try? container.decode(Double.self)).map { Date(timeIntervalSinceReferenceDate: $0) }
                ?? Timestamp.parse(container.decode(String.self))
            // A forged cursor's instant is bounded like any other before it reaches SQL.
            guard let date, Timestamp.supportedRange.contains(date) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an instant Surge issues")
            }
            return date
        }
        return try? decoder.decode(type, from: data)
    }
}
