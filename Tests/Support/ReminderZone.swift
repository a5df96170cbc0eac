import Foundation

/// A time zone whose local time now is hours away from `hour`:`minute`, for tests that create users over some seconds
/// and then expect all their next reminders at that local time on one day. In a zone where that time falls while the
/// users are created, the first get it today and the rest tomorrow (a run at 07:59 UTC once saw both, with Rome's
/// default 09:00).
public func zoneWhereNowIsFar(from hour: Int, minute: Int = 0, now: Date = Date()) -> String {
    let candidates = ["Europe/Rome", "America/New_York", "Asia/Tokyo", "America/Los_Angeles"]
    func distance(_ zone: String) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        let local = calendar.dateComponents([.hour, .minute], from: now)
        let minutes = abs(local.hour! * 60 + local.minute! - (hour * 60 + minute))
        return min(minutes, 24 * 60 - minutes)
    }
    return candidates.max { distance($0) < distance($1) }!
}
