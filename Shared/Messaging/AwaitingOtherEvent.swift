/// A handler's error saying its event needs a fact that travels on another partition or topic and has not been
/// read yet (notifications' recipient whose `user.registered` is still on its way, say).
///
/// The consumer tries the record once more after a short backoff; if it still waits, the record is parked in the
/// consumer's `deferred_events` table, its offset committed and the partition moves on. The consumer's re-drive
/// applies it once what it awaits has arrived, or dead-letters it after `EventConsumer.Configuration.deferralLimit`.
/// Throw it only for a fact that will arrive: anything else is a failure and follows the retry and dead-letter rules.
public protocol AwaitingOtherEvent: Error {
    /// What the event waits for, e.g. "user 1234… is not known yet": the parked record's reason, and the dead letter's
    /// when it never arrives.
    var awaited: String { get }
}
