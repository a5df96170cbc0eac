/// A Kafka topic of the catalogue. Each producing service owns one topic; every record's key is the user or group
/// id the event is about, so one user's (or household's) events stay in order on one partition.
public struct Topic: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public let producer: String
    public let partitions: Int
    public let summary: String

    public var description: String { name }

    public init(name: String, producer: String, partitions: Int = Topic.defaultPartitions, summary: String) {
        self.name = name
        self.producer = producer
        self.partitions = partitions
        self.summary = summary
    }

    public static let defaultPartitions = 12

    /// The deployment setting for the partitions of each domain topic, read where topics are created
    /// (`surge-admin topics`, `surge-broker`); producers and consumers take the count from the cluster.
    public static let partitionsVariable = "KAFKA_TOPIC_PARTITIONS"
    public static let partitionsRange = 1...10_000

    public struct InvalidPartitions: Error, CustomStringConvertible {
        public let given: String
        public var description: String {
            "\(Topic.partitionsVariable) (or --partitions) must be a whole number of partitions from \(Topic.partitionsRange.lowerBound) to \(Topic.partitionsRange.upperBound), not \"\(given)\""
        }
    }

    /// The partitions each domain topic gets: `given` (a command-line option), else `KAFKA_TOPIC_PARTITIONS` from
    /// `environment`, else `defaultPartitions`.
    public static func partitions(given: Int?, environment: [String: String]) throws(InvalidPartitions) -> Int {
        if let given {
            guard partitionsRange.contains(given) else { throw InvalidPartitions(given: String(given)) }
            return given
        }
        guard let text = environment[partitionsVariable] else { return defaultPartitions }
        guard let count = Int(text), partitionsRange.contains(count) else { throw InvalidPartitions(given: text) }
        return count
    }

    /// The same topic with another number of partitions.
    public func with(partitions: Int) -> Topic {
        Topic(name: name, producer: producer, partitions: partitions, summary: summary)
    }

    /// Every topic a deployment creates: each domain topic with `partitions` partitions, each dead-letter topic with its
    /// one.
    public static func catalogue(partitions: Int) -> [Topic] {
        all.map { $0.with(partitions: partitions) } + deadLetters
    }

    public static let identity = Topic(
        name: "surge.identity.events", producer: "identity",
        summary: "Accounts, profiles and preferences, friendships, group membership, deletions.")
    public static let challenges = Topic(
        name: "surge.challenges.events", producer: "challenges",
        summary: "Challenge, habit and chore definitions and their versions, invitations, likes.")
    public static let progress = Topic(
        name: "surge.progress.events", producer: "progress",
        summary: "Enrolments, check-ins, days, streaks, attempts, points, chore occurrences.")
    public static let leaderboard = Topic(
        name: "surge.leaderboard.events", producer: "leaderboard",
        summary: "Rank changes on leaderboards.")
    public static let badges = Topic(
        name: "surge.badges.events", producer: "badges",
        summary: "Badges awarded.")
    public static let notifications = Topic(
        name: "surge.notifications.events", producer: "notifications",
        summary: "Notifications scheduled and delivered.")

    /// Every topic that carries domain events, in catalogue order: those the registry's services produce.
    public static let all: [Topic] = SurgeService.deployed.compactMap(\.entry.topic)

    /// Where a consumer group parks records it could not handle, with the error in the headers.
    public static func deadLetter(consumerGroup: String) -> Topic {
        Topic(
            name: "surge.deadletter.\(consumerGroup)", producer: consumerGroup, partitions: 1,
            summary: "Records the \(consumerGroup) consumer group could not handle.")
    }

    /// The dead-letter topic of every service's consumer group.
    public static let deadLetters: [Topic] = SurgeService.deployed.map { deadLetter(consumerGroup: $0.consumerGroup) }
}
