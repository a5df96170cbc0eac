import Foundation
import SurgeContracts

/// The key performance indicators of the product brief (000), each with its target. docs/analytics.md defines every
/// term (session, active user, start, check-in day, break); this module holds the arithmetic, with no I/O.
public enum KPI: String, CaseIterable, Codable, Sendable, JSONSchemaEnum {
    case day7Retention
    case challengeStartRate
    case dailyCheckInRate
    case completionRate
    case averageStreakBeforeBreak
    case restartRate

    public enum Direction: String, CaseIterable, Codable, Sendable, JSONSchemaEnum {
        /// Good when the value is at least the target.
        case atLeast
        /// Good when the value is at most the target (fewer restarts means more first-time successes).
        case atMost
    }

    public enum Unit: String, CaseIterable, Codable, Sendable, JSONSchemaEnum {
        /// A share between 0 and 1.
        case ratio
        case days
    }

    public var title: String {
        switch self {
        case .day7Retention: "Day-7 retention"
        case .challengeStartRate: "Challenge start rate (first session)"
        case .dailyCheckInRate: "Daily check-in rate (active users)"
        case .completionRate: "Challenge completion rate"
        case .averageStreakBeforeBreak: "Average streak before a break"
        case .restartRate: "Restart rate after failure"
        }
    }

    /// 000's targets: Day-7 retention > 40 %, start rate > 60 %, daily check-in rate > 70 %, completion > 15 %,
    /// streak before a break > 7 days, restart rate < 50 %.
    public var target: Double {
        switch self {
        case .day7Retention: 0.4
        case .challengeStartRate: 0.6
        case .dailyCheckInRate: 0.7
        case .completionRate: 0.15
        case .averageStreakBeforeBreak: 7
        case .restartRate: 0.5
        }
    }

    public var direction: Direction { self == .restartRate ? .atMost : .atLeast }
    public var unit: Unit { self == .averageStreakBeforeBreak ? .days : .ratio }

    /// Whether `value` meets the target.
    public func isMet(by value: Double) -> Bool {
        direction == .atLeast ? value >= target : value <= target
    }
}

/// One KPI over one period: a count out of a count (for the average streak, days of streak out of breaks). The value
/// is absent when there is nothing to measure, never a misleading 0.
public struct KPIValue: Codable, Sendable, Equatable {
    public var numerator: Int
    public var denominator: Int

    public init(numerator: Int = 0, denominator: Int = 0) {
        self.numerator = numerator
        self.denominator = denominator
    }

    public var value: Double? { denominator > 0 ? Double(numerator) / Double(denominator) : nil }

    public static func + (lhs: KPIValue, rhs: KPIValue) -> KPIValue {
        KPIValue(numerator: lhs.numerator + rhs.numerator, denominator: lhs.denominator + rhs.denominator)
    }
}

/// Every KPI's value over one period (a day, a cohort week, or the whole range).
public struct KPIValues: Sendable, Equatable {
    public var day7Retention = KPIValue()
    public var challengeStartRate = KPIValue()
    public var dailyCheckInRate = KPIValue()
    public var completionRate = KPIValue()
    public var averageStreakBeforeBreak = KPIValue()
    public var restartRate = KPIValue()

    public init() {}

    public subscript(kpi: KPI) -> KPIValue {
        get {
            switch kpi {
            case .day7Retention: day7Retention
            case .challengeStartRate: challengeStartRate
            case .dailyCheckInRate: dailyCheckInRate
            case .completionRate: completionRate
            case .averageStreakBeforeBreak: averageStreakBeforeBreak
            case .restartRate: restartRate
            }
        }
        set {
            switch kpi {
            case .day7Retention: day7Retention = newValue
            case .challengeStartRate: challengeStartRate = newValue
            case .dailyCheckInRate: dailyCheckInRate = newValue
            case .completionRate: completionRate = newValue
            case .averageStreakBeforeBreak: averageStreakBeforeBreak = newValue
            case .restartRate: restartRate = newValue
            }
        }
    }

    public static func + (lhs: KPIValues, rhs: KPIValues) -> KPIValues {
        var sum = KPIValues()
        for kpi in KPI.allCases { sum[kpi] = lhs[kpi] + rhs[kpi] }
        return sum
    }
}

/// The KPIs of one local day. Cohort KPIs (retention, start rate) belong to the users who registered that day;
/// the others to what happened on that day.
public struct DayKPIs: Sendable, Equatable {
    public var date: LocalDate
    public var registrations: Int
    public var values: KPIValues

    public init(date: LocalDate, registrations: Int = 0, values: KPIValues = KPIValues()) {
        self.date = date
        self.registrations = registrations
        self.values = values
    }
}

/// The KPIs of the users who registered in one week (Monday to Sunday of their own zone), over their whole history.
public struct CohortWeekKPIs: Sendable, Equatable {
    public var week: LocalDate
    public var users: Int
    public var values: KPIValues

    public init(week: LocalDate, users: Int = 0, values: KPIValues = KPIValues()) {
        self.week = week
        self.users = users
        self.values = values
    }
}

/// A date range of KPIs: one row per day (days without data included, so charts keep their axis), the cohort weeks
/// that began in the range, and the range's totals.
public struct KPIReport: Sendable, Equatable {
    public var range: ClosedRange<LocalDate>
    public var days: [DayKPIs]
    public var cohortWeeks: [CohortWeekKPIs]

    /// Fills in the days of `range` that have no row.
    public init(range: ClosedRange<LocalDate>, days: [DayKPIs], cohortWeeks: [CohortWeekKPIs]) {
        self.range = range
        let known = Dictionary(days.map { ($0.date, $0) }, uniquingKeysWith: { first, _ in first })
        self.days = (0...range.lowerBound.days(until: range.upperBound)).map { offset in
            let date = range.lowerBound.adding(days: offset)
            return known[date] ?? DayKPIs(date: date)
        }
        self.cohortWeeks = cohortWeeks.sorted { $0.week < $1.week }
    }

    public var totals: KPIValues { days.reduce(KPIValues()) { $0 + $1.values } }

    /// Long form, one row per period and KPI, for spreadsheets: `scope,period,kpi,value,numerator,denominator,target`.
    public var csv: String {
        var lines = ["scope,period,kpi,value,numerator,denominator,target"]
        func append(_ scope: String, _ period: String, _ values: KPIValues) {
            for kpi in KPI.allCases {
                let value = values[kpi]
                lines.append(
                    "\(scope),\(period),\(kpi.rawValue),\(value.value.map(Self.format) ?? ""),\(value.numerator),\(value.denominator),\(Self.format(kpi.target))")
            }
        }
        for day in days { append("day", day.date.description, day.values) }
        for week in cohortWeeks { append("cohortWeek", week.week.description, week.values) }
        append("total", "\(range.lowerBound)..\(range.upperBound)", totals)
        return lines.joined(separator: "\n") + "\n"
    }

    static func format(_ value: Double) -> String {
        let text = String(format: "%.6f", value)
        let trimmed = text.replacingOccurrences(of: "0+$", with: "", options: .regularExpression)
        return trimmed.hasSuffix(".") ? String(trimmed.dropLast()) : trimmed
    }
}

/// What a caller may ask for.
public enum KPIRangeError: Error, Equatable {
    case fromAfterTo
    case tooLong(maxDays: Int)
    case unsupported
}

public enum KPIRange {
    public static let maxDays = 366
    /// The range shown when none is asked for: the last four weeks, today included.
    public static let defaultDays = 28

    public static func resolve(from: LocalDate?, to: LocalDate?, today: LocalDate) throws(KPIRangeError) -> ClosedRange<LocalDate> {
        let end = to ?? today
        let start = from ?? end.adding(days: -(defaultDays - 1))
        guard start.isSupported, end.isSupported else { throw .unsupported }
        guard start <= end else { throw .fromAfterTo }
        guard start.days(until: end) < maxDays else { throw .tooLong(maxDays: maxDays) }
        return start...end
    }
}
