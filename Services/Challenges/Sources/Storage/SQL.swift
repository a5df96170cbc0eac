import ChallengesDomain
import Foundation
import PostgresNIO
import SurgeContracts

/// Builds a query whose shape depends on the request (filters, sort, cursor), binding every value.
struct SQLBuilder {
    private(set) var sql = ""
    private var bindings = PostgresBindings()
    private var count = 0

    mutating func append(_ text: String) {
        sql += text
    }

    /// Binds `value` and returns its placeholder (`$3`).
    mutating func bind<Value: PostgresDynamicTypeEncodable>(_ value: Value) -> String {
        bindings.append(value)
        count += 1
        return "$\(count)"
    }

    var query: PostgresQuery { PostgresQuery(unsafeSQL: sql, binds: bindings) }
}

enum ChallengeQueries {
    /// The SQL form of `AccessPolicy.canSee` for the challenge aliased `c` and the caller bound at `caller`.
    static func visibleTo(_ caller: String) -> String {
        """
        (c.visibility IN ('curated', 'public')
         OR (c.visibility = 'private' AND (c.owner_id = \(caller)
             OR EXISTS (SELECT 1 FROM invitations i WHERE i.challenge_id = c.challenge_id AND i.invitee_id = \(caller))))
         OR (c.visibility = 'group' AND (
             EXISTS (SELECT 1 FROM group_members m WHERE m.group_id = c.group_id AND m.user_id = \(caller))
             OR EXISTS (SELECT 1 FROM invitations i WHERE i.challenge_id = c.challenge_id AND i.invitee_id = \(caller)))))
        """
    }

    /// What a list row selects: the latest version whole plus the counters.
    static let summaryColumns = """
        v.definition::text, c.likes_count, c.trending_score, c.created_at
        """

    static let latestVersionJoin = """
        challenges c JOIN challenge_versions v ON v.challenge_id = c.challenge_id AND v.version = c.latest_version
        """
}

/// A version as `challenge_versions.definition` holds it.
enum StoredJSON {
    static func encode(_ version: ChallengeVersion) throws -> String {
        String(decoding: try SurgeJSON.encode(version), as: UTF8.self)
    }

    static func version(_ text: String) throws -> ChallengeVersion {
        try SurgeJSON.decode(ChallengeVersion.self, from: Data(text.utf8))
    }
}
