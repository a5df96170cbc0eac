import Foundation
import SurgeContracts

public enum BrowseSort: String, Codable, Sendable, CaseIterable, JSONSchemaEnum {
    /// Most recently created first.
    case newest
    /// Most likes first.
    case liked
    /// Most joins and likes in the last seven days first.
    case trending
    /// Best full-text match first (needs `q`).
    case relevance
}

/// The library's filters, search and sort, read from the query string. Every malformed parameter is a field error.
public struct BrowseQuery: Sendable, Equatable {
    public var q: String?
    public var kind: ChallengeKind?
    public var difficulty: Difficulty?
    public var category: String?
    public var minDays: Int?
    public var maxDays: Int?
    public var sort: BrowseSort

    public init(
        q: String? = nil, kind: ChallengeKind? = nil, difficulty: Difficulty? = nil, category: String? = nil, minDays: Int? = nil,
        maxDays: Int? = nil, sort: BrowseSort? = nil
    ) {
        self.q = q
        self.kind = kind
        self.difficulty = difficulty
        self.category = category
        self.minDays = minDays
        self.maxDays = maxDays
        self.sort = sort ?? (q == nil ? .newest : .relevance)
    }

    public static let maxQueryLength = 200

    /// Parses `q`, `kind`, `difficulty`, `category`, `minDays`, `maxDays` and `sort`; other parameters are ignored. A NUL
    /// character in any parameter is `nulCharacters`, every other malformed one `invalidParameters`.
    public init(parameters: [String: String]) throws(ChallengesError) {
        // `q` and `category` reach SQL, which cannot take U+0000; refuse it in any parameter.
        let nul = FieldError.nulCharacters(in: parameters)
        guard nul.isEmpty else { throw .nulCharacters(nul) }
        var errors: [FieldError] = []
        func nonEmpty(_ name: String) -> String? {
            parameters[name].map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        func parseEnum<Value: RawRepresentable & CaseIterable>(_ name: String, _ type: Value.Type) -> Value? where Value.RawValue == String {
            guard let text = nonEmpty(name) else { return nil }
            guard let value = Value(rawValue: text) else {
                errors.append(.init(field: name, message: "must be one of \(Value.allCases.map(\.rawValue).joined(separator: ", "))"))
                return nil
            }
            return value
        }
        func days(_ name: String) -> Int? {
            guard let text = nonEmpty(name) else { return nil }
            guard let value = Int(text), (1...366).contains(value) else {
                errors.append(.init(field: name, message: "must be a number of days from 1 to 366"))
                return nil
            }
            return value
        }
        let q = nonEmpty("q")
        if let q, q.count > Self.maxQueryLength {
            errors.append(.init(field: "q", message: "must be at most \(Self.maxQueryLength) characters"))
        }
        let kind = parseEnum("kind", ChallengeKind.self)
        let difficulty = parseEnum("difficulty", Difficulty.self)
        let category = nonEmpty("category")?.lowercased()
        if let category, category.count > DraftLimits.category.upperBound {
            errors.append(.init(field: "category", message: "must be at most \(DraftLimits.category.upperBound) characters"))
        }
        // minDays above maxDays is a filter nothing matches: an empty list, as any other such filter gets.
        let minDays = days("minDays")
        let maxDays = days("maxDays")
        // Relevance without a search has nothing to be relevant to: the default order, newest first.
        let requested = parseEnum("sort", BrowseSort.self)
        let sort = requested == .relevance && q == nil ? .newest : requested
        guard errors.isEmpty else { throw .invalidParameters(errors) }
        self.init(q: q, kind: kind, difficulty: difficulty, category: category, minDays: minDays, maxDays: maxDays, sort: sort)
    }
}

/// Where a library page ended: the sort it belongs to, the last item's sort key and its id (the tie-breaker).
public struct BrowsePosition: Codable, Sendable, Equatable {
    public var sort: BrowseSort
    public var key: Double
    public var id: UUID

    public init(sort: BrowseSort, key: Double, id: UUID) {
        self.sort = sort
        self.key = key
        self.id = id
    }
}

/// Where a newest-first page ended (my challenges, a household's chores): the creation sequence number.
public struct SequencePosition: Codable, Sendable, Equatable {
    public var seq: Int

    public init(seq: Int) {
        self.seq = seq
    }
}
