import SurgeContracts

/// Every version of one definition; each judges the days from its `effectiveFrom` until the next version's.
public struct DefinitionTimeline: Sendable, Equatable {
    public let versions: [ChallengeDefinition]

    /// Versions in any order; at least one.
    public init(_ versions: [ChallengeDefinition]) {
        precondition(!versions.isEmpty, "a timeline needs a version")
        self.versions = versions.sorted { $0.version < $1.version }
    }

    /// The version in force on `date`: the newest whose effective date is not after it.
    public func version(on date: LocalDate) -> ChallengeDefinition {
        versions.last { $0.effectiveFrom.map { $0 <= date } ?? true } ?? versions[0]
    }

    public var latest: ChallengeDefinition { versions[versions.count - 1] }
}
