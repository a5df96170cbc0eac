import Foundation
import SurgeCalendar
import SurgeContracts

public enum WindowKind: String, Sendable, Codable, CaseIterable, JSONSchemaEnum {
    case week, month
    case allTime = "all-time"
}

/// A window of a board: an ISO week ("2026-W48", keyed by the ISO week-numbering year: 2024-12-30 is "2025-W01"),
/// a month ("2026-11"), or all time ("all-time").
///
/// Weeks run Monday to Sunday; week 1 is the one with the year's first Thursday, so a year has 52 or 53 weeks. Keys
/// parse only for windows that overlap `LocalDate.supportedRange` (1970-W01 to 2201-W01, 1970-01 to 2200-12).
/// Keys sort by kind (week, month, all time), then chronologically.
public struct WindowKey: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    public let kind: WindowKind
    /// The ISO week-numbering year for a week, the calendar year for a month; 0 for all time.
    public let year: Int
    /// The week (1...53) or month (1...12); 0 for all time.
    public let number: Int

    private init(kind: WindowKind, year: Int, number: Int) {
        self.kind = kind
        self.year = year
        self.number = number
    }

    public static let allTime = WindowKey(kind: .allTime, year: 0, number: 0)

    public static func week(containing date: LocalDate) -> WindowKey {
        let thursday = date.adding(days: 4 - date.weekday.isoNumber)
        let firstOfYear = LocalDate(year: thursday.year, month: 1, day: 1) ?? thursday
        return WindowKey(kind: .week, year: thursday.year, number: firstOfYear.days(until: thursday) / 7 + 1)
    }

    public static func month(containing date: LocalDate) -> WindowKey {
        WindowKey(kind: .month, year: date.year, number: date.month)
    }

    public static func containing(_ date: LocalDate, kind: WindowKind) -> WindowKey {
        switch kind {
        case .week: week(containing: date)
        case .month: month(containing: date)
        case .allTime: allTime
        }
    }

    /// 52 or 53: the week of 28 December is always the year's last.
    public static func weeks(inYear year: Int) -> Int {
        LocalDate(year: year, month: 12, day: 28).map { week(containing: $0).number } ?? 52
    }

    public init?(_ text: String) {
        if text == WindowKind.allTime.rawValue {
            self = .allTime
            return
        }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, let year = Self.number(parts[0]) else { return nil }
        let key: WindowKey
        if parts[1].first == "W" {
            guard parts[1].count == 3, let week = Self.number(parts[1].dropFirst()), (1...Self.weeks(inYear: year)).contains(week)
            else { return nil }
            key = WindowKey(kind: .week, year: year, number: week)
        } else {
            guard parts[1].count == 2, let month = Self.number(parts[1]), (1...12).contains(month) else { return nil }
            key = WindowKey(kind: .month, year: year, number: month)
        }
        guard key.isSupported else { return nil }
        self = key
    }

    private static func number(_ digits: Substring) -> Int? {
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    public var description: String {
        switch kind {
        case .week: Self.zeroPadded(year, 4) + "-W" + Self.zeroPadded(number, 2)
        case .month: Self.zeroPadded(year, 4) + "-" + Self.zeroPadded(number, 2)
        case .allTime: kind.rawValue
        }
    }

    private static func zeroPadded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count < width ? String(repeating: "0", count: width - digits.count) + digits : digits
    }

    /// First and last local dates; nil for all time.
    public var dates: ClosedRange<LocalDate>? {
        switch kind {
        case .week:
            guard let fourthOfJanuary = LocalDate(year: year, month: 1, day: 4) else { return nil }
            let start = fourthOfJanuary.startOfWeek.adding(days: 7 * (number - 1))
            return start...start.adding(days: 6)
        case .month:
            guard let first = LocalDate(year: year, month: number, day: 1) else { return nil }
            return first...first.endOfMonth
        case .allTime:
            return nil
        }
    }

    /// The window before this one; nil for all time and before 1970.
    public var previous: WindowKey? {
        neighbour(days: -1)
    }

    /// The window after this one; nil for all time and after 2200.
    public var next: WindowKey? {
        neighbour(days: 1)
    }

    private func neighbour(days: Int) -> WindowKey? {
        guard let dates else { return nil }
        let date = days < 0 ? dates.lowerBound.adding(days: days) : dates.upperBound.adding(days: days)
        let key = WindowKey.containing(date, kind: kind)
        return key.isSupported ? key : nil
    }

    private var isSupported: Bool {
        dates?.overlaps(LocalDate.supportedRange) ?? (kind == .allTime)
    }

    /// Start and end instants in a zone (end = the next window's start: Monday 00:00 / the 1st 00:00 local; a DST week
    /// lasts 167 or 169 hours); nil for all time.
    public func bounds(in calendar: LocalCalendar) -> (start: Date, end: Date)? {
        dates.map { (calendar.start(of: $0.lowerBound), calendar.end(of: $0.upperBound)) }
    }

    public static func < (lhs: WindowKey, rhs: WindowKey) -> Bool {
        let order = WindowKind.allCases
        return (order.firstIndex(of: lhs.kind) ?? 0, lhs.year, lhs.number) < (order.firstIndex(of: rhs.kind) ?? 0, rhs.year, rhs.number)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let key = WindowKey(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "expected a window as YYYY-Www (an ISO week), YYYY-MM or all-time, got \(text)")
        }
        self = key
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
