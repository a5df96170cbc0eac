import Foundation
import SurgeCalendar
import SurgeContracts

/// A group's time zone over time. A change made during a week applies from the next week (Monday 00:00 in the zone
/// in force when it was made), so the window under way is neither cut short nor stretched; months take the new
/// zone from that Monday too.
public struct GroupZone: Sendable, Equatable {
    public var zone: String
    public var nextZone: String?
    public var changesAt: Date?

    public init(zone: String, nextZone: String? = nil, changesAt: Date? = nil) {
        self.zone = zone
        self.nextZone = nextZone
        self.changesAt = changesAt
    }

    /// The zone in force at `instant`.
    public func zoneName(at instant: Date) -> String {
        if let nextZone, let changesAt, instant >= changesAt { return nextZone }
        return zone
    }

    public func calendar(at instant: Date) -> LocalCalendar { LocalCalendar(zoneNamedOrUTC: zoneName(at: instant)) }

    /// The group's day at `instant`. When the new zone is behind the old one, the hours between the old zone's
    /// Monday and the new zone's belong to the new week, not back to the Sunday of a week already over.
    public func date(at instant: Date) -> LocalDate {
        let day = calendar(at: instant).date(at: instant)
        guard nextZone != nil, let changesAt, instant >= changesAt else { return day }
        return max(day, LocalCalendar(zoneNamedOrUTC: zone).date(at: changesAt))
    }

    /// The zone a window's days and bounds are in: the one in force when the window begins.
    public func zoneName(for window: WindowKey) -> String {
        guard let nextZone, let changesAt, let bounds = window.bounds(in: LocalCalendar(zoneNamedOrUTC: zone)), bounds.start >= changesAt else {
            return zone
        }
        return nextZone
    }

    public func calendar(for window: WindowKey) -> LocalCalendar { LocalCalendar(zoneNamedOrUTC: zoneName(for: window)) }

    /// The schedule after the group's zone was set to `newZone` at `instant`.
    public func changing(to newZone: String, at instant: Date) -> GroupZone {
        let inForce = zoneName(at: instant)
        guard newZone != inForce else { return GroupZone(zone: inForce) }
        let calendar = LocalCalendar(zoneNamedOrUTC: inForce)
        let nextWeek = calendar.start(of: calendar.date(at: instant).startOfWeek.adding(days: 7))
        return GroupZone(zone: inForce, nextZone: newZone, changesAt: nextWeek)
    }
}
