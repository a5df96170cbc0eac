import Foundation

/// What progress knows about a person: enough to judge their days in their own time zone.
public struct Member: Sendable, Equatable {
    public var userID: UUID
    public var timeZone: String
}
