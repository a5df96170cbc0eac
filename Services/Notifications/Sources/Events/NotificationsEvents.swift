import Foundation
import Logging
import NotificationsDomain
import PostgresNIO
import SurgeContracts
import SurgeRuntime
import SurgeMessaging
import SurgePostgres

/// An event names a user whose registration has not been handled yet (it travels on another partition): the consumer
/// parks the event until it has (`AwaitingOtherEvent`).
struct DirectoryLag: AwaitingOtherEvent, CustomStringConvertible {
    var userID: UUID
    var awaited: String { "user \(userID) is not known yet" }
    var description: String { awaited }
}

/// The stores a notifications event handler works with, over its inbox transaction's connection.
struct NotificationStores {
    let connection: PostgresConnection
    let logger: Logger

    var recipients: RecipientStore { RecipientStore(connection: connection, logger: logger) }
    var scheduled: ScheduledNotifications { ScheduledNotifications(connection: connection, logger: logger) }
    var habits: HabitReminders { HabitReminders(connection: connection, logger: logger) }
    var webhooks: WebhookStore { WebhookStore(connection: connection, logger: logger) }
    var pushes: PushQueue { PushQueue(connection: connection, logger: logger) }
}

/// What the notification service consumes, one handler type per concern. A change reschedules from the later of its
/// own time and the service's clock: an event read late must not schedule a reminder that is already past.
enum NotificationsEvents {
    static func routes(inbox: Inbox, clock: ServiceClock) -> ConsumerRoutes<NotificationStores> {
        var routes = ConsumerRoutes { NotificationStores(connection: $0, logger: $1) }
        DirectoryHandlers.register(in: &routes, clock: clock)
        ReminderHandlers.register(in: &routes, inbox: inbox, clock: clock)
        InboxHandlers.register(in: &routes, inbox: inbox)
        return routes
    }
}

/// Who to tell and how: identity's registrations, profiles, preferences and deletions, and group memberships (a group's
/// webhooks hear its members).
enum DirectoryHandlers {
    static func register(in routes: inout ConsumerRoutes<NotificationStores>, clock: ServiceClock) {
        routes.on(UserRegistered.self) { event, stores in
            let data = event.data
            let store = stores.recipients
            let known = try await store.recipient(data.userID)
            var recipient = known
                ?? Recipient(userID: data.userID, displayName: data.displayName, timeZone: data.timeZone, locale: data.locale, enabled: true)
            recipient.displayName = data.displayName
            try await store.save(recipient, now: data.registeredAt)
            if known == nil {
                let joined = recipient.calendar.date(at: data.registeredAt)
                try await stores.scheduled.schedule(
                    .reEngagement, key: "re-engagement:\(joined)", for: recipient, on: ReEngagement.day(after: joined))
            }
        }
        routes.on(ProfileChanged.self) { event, stores in
            let data = event.data
            let store = stores.recipients
            guard var recipient = try await store.recipient(data.userID) else { return }
            recipient.displayName = data.displayName
            recipient.timeZone = data.timeZone
            recipient.locale = data.locale
            // A new zone moves the next reminder to the same wall-clock time there.
            try await store.save(recipient, now: max(data.changedAt, clock.now()))
        }
        routes.on(PreferencesChanged.self) { event, stores in
            let data = event.data
            let store = stores.recipients
            guard var recipient = try await store.recipient(data.userID) else { return }
            recipient.enabled = data.notificationsEnabled
            recipient.reminderTime = data.dailyReminderTime
            recipient.quiet = data.quietHours.map { QuietPeriod(start: $0.start, end: $0.end) }
            recipient.disabledCategories = data.disabledCategories ?? []
            try await store.save(recipient, now: max(data.changedAt, clock.now()))
            try await stores.pushes.dropUnwanted(by: recipient)
        }
        routes.on(GroupMembershipChanged.self) { event, stores in
            let data = event.data
            let member = data.change == .joined || data.change == .roleChanged
            guard try await !stores.recipients.isErased(data.userID) else { return }
            try await stores.webhooks.setMembership(data.groupID, data.userID, member: member)
        }
        routes.on(UserDeleted.self) { event, stores in
            try await stores.recipients.erase(event.data.userID)
        }
    }
}

/// What moves reminders and the day's nudges: check-ins (a day already checked in needs no reminder; completion times make
/// the personalised reminder time; two idle days make a re-engagement nudge; a quantity close to the day's target makes a
/// close-to-goal note; a day completed onto a streak milestone tells it at once), judged days (two missed in a row: the
/// streak is at risk), habits and their definitions, vacations (no reminder while one lasts) and chore occurrences
/// reaching their due time.
enum ReminderHandlers {
    static func register(in routes: inout ConsumerRoutes<NotificationStores>, inbox: Inbox, clock: ServiceClock) {
        routes.on(CheckInRecorded.self) { event, stores in
            let data = event.data
            let store = stores.recipients
            // Only a later day moves the user's and the habit's latest check-in (the day's first check-in writes them).
            guard let (before, pendingNudges) = try await store.noteCheckIn(data.userID, attemptID: data.attemptID, on: data.localDate) else { return }
            var recipient = before
            recipient.lastCheckIn = max(recipient.lastCheckIn ?? data.localDate, data.localDate)
            // Two idle days from the latest day with a check-in: the nudge waits for that. The day's later check-ins find
            // it pending (a change of zone, time or switches moves or drops it as it changes the recipient).
            let lastActive = recipient.lastCheckIn ?? data.localDate
            let nudge = "re-engagement:\(lastActive)"
            if pendingNudges != [nudge] {
                try await stores.scheduled.replace(.reEngagement, key: nudge, for: recipient, on: ReEngagement.day(after: lastActive))
            }
            // Close to the day's goal: once per local day, and only while that day lasts (a late offline check-in for a
            // day gone by is no news).
            if let total = data.dayQuantity, let target = data.dayTarget, CloseToGoal.isClose(total, target: target),
                data.recordedAt < recipient.calendar.end(of: data.localDate)
            {
                try await inbox.deliver(
                    .closeToGoal(recipient.language, remaining: target - total, unit: data.unit, attemptID: data.attemptID), kind: .closeToGoal,
                    key: "close-to-goal:\(data.localDate)", to: data.userID, at: data.recordedAt, connection: stores.connection, logger: stores.logger)
            }
            if let days = StreakMilestone.reached(completingDay: data.dayComplete, liveStreak: data.currentStreak) {
                try await inbox.deliver(
                    .streakMilestone(recipient.language, days: days, attemptID: data.attemptID), kind: .streakMilestone,
                    key: "streak-milestone:\(data.attemptID.key):\(days)", to: data.userID, at: data.recordedAt, connection: stores.connection, logger: stores.logger)
            }
            guard data.dayComplete else { return }
            let minute = recipient.calendar.localTime(at: data.happenedAt).minutesSinceMidnight
            let personalised = PersonalisedTime.from(try await store.noteCompletion(data.userID, on: data.localDate, minute: minute))
            if personalised != recipient.personalisedTime {
                recipient.personalisedTime = personalised
                try await store.save(recipient, now: data.recordedAt)
            }
        }
        routes.on(DayJudged.self, when: { $0.data.period == .day }) { event, stores in
            let data = event.data
            let store = stores.recipients
            guard let recipient = try await store.recipientOnceKnown(data.userID) else { return }
            let previous = try await store.misses(of: data.attemptID)
            let misses = StreakRisk.misses(after: data.outcome, previous: previous)
            try await store.setMisses(misses, of: data.attemptID, userID: data.userID)
            guard StreakRisk.becomesAtRisk(previous: previous, now: misses) else { return }
            try await stores.scheduled.schedule(
                .streakAtRisk, key: "streak-at-risk:\(data.attemptID.key):\(data.localDate)", for: recipient, on: data.localDate.adding(days: 1),
                attemptID: data.attemptID)
        }
        routes.on(AttemptEnded.self) { event, stores in
            try await stores.recipients.forgetAttempt(event.data.attemptID)
            try await stores.habits.forgetAttempt(event.data.attemptID)
        }
        routes.on(AttemptStarted.self) { event, stores in
            // A habit's attempt: reminded at the habit's own time (once its definition, on another topic, is known).
            let data = event.data
            guard data.kind == .habit, let recipient = try await stores.recipients.recipientOnceKnown(data.userID)
            else { return }
            let habits = stores.habits
            try await habits.noteAttempt(data.attemptID, of: data.userID, challengeID: data.challengeID)
            try await habits.reschedule(recipient, now: max(data.startedAt, clock.now()))
        }
        routes.on(ChallengePublished.self) { event, stores in
            try await habitDefinition(event.data.definition, at: max(event.data.publishedAt, clock.now()), stores: stores)
        }
        routes.on(ChallengeChanged.self) { event, stores in
            try await habitDefinition(event.data.definition, at: max(event.data.changedAt, clock.now()), stores: stores)
        }
        routes.on(ChallengeDeleted.self) { event, stores in
            guard event.data.kind == .habit else { return }
            // Its attempts end too (progress); until then a pending reminder finds no habit and is dropped.
            try await stores.habits.forgetDefinition(event.data.challengeID)
        }
        routes.on(AttemptPaused.self) { event, stores in
            // A vacation pauses everything: no daily reminder while it lasts. One attempt's pause leaves the others due.
            let data = event.data
            guard data.pauseKind == .vacation else { return }
            try await stores.recipients.noteVacation(data.pauseID, of: data.userID, from: data.from, through: data.through)
        }
        routes.on(AttemptResumed.self) { event, stores in
            try await stores.recipients.shortenVacation(event.data.pauseID, through: event.data.pausedThrough)
        }
        routes.on(ChoreOccurrenceChanged.self) { event, stores in
            // 004: the assignee is reminded at the due time. Progress flags a pending occurrence overdue as its due time
            // passes: that is "due now". A chore due by the end of its day (no due time) has no moment to remind at.
            // Each occurrence is its own reminder; a reminder, so nothing at all while chores or everything are off.
            let data = event.data
            guard data.change == .overdue, data.dueTime != nil, let assigneeID = data.assigneeID,
                let assignee = try await stores.recipients.recipientOnceKnown(assigneeID),
                assignee.wants(.choreDue)
            else { return }
            try await inbox.deliver(
                .choreDue(assignee.language, chore: data.title, groupID: data.groupID), kind: .choreDue, key: "chore-due:\(data.occurrenceID.key)",
                to: assigneeID, at: data.changedAt, connection: stores.connection, logger: stores.logger)
        }
        routes.on(ChoreOccurrenceDueSoon.self) { event, stores in
            // 004's "about an hour before": progress tells when an occurrence comes within its chore's lead time. The
            // due time is told in the assignee's zone; the key names the due instant, so a chore moved to another time
            // reminds again.
            let data = event.data
            guard let assigneeID = data.assigneeID,
                let assignee = try await stores.recipients.recipientOnceKnown(assigneeID),
                assignee.wants(.choreDue)
            else { return }
            try await inbox.deliver(
                .choreDueSoon(assignee.language, chore: data.title, dueAt: assignee.calendar.localTime(at: data.dueAt), groupID: data.groupID),
                kind: .choreDue, key: "chore-due-soon:\(data.occurrenceID.key):\(Int(data.dueAt.timeIntervalSince1970))", to: assigneeID,
                at: data.flaggedAt, connection: stores.connection, logger: stores.logger)
        }
    }
}

/// What to tell people about: streak milestones, badges earned, friend requests, challenge invitations, being overtaken
/// on a board (at most one per board per 15 minutes, the latest standing replacing the earlier one).
enum InboxHandlers {
    static let overtakenWindow: TimeInterval = 15 * 60

    static func register(in routes: inout ConsumerRoutes<NotificationStores>, inbox: Inbox) {
        routes.on(StreakChanged.self, when: { StreakMilestone.reached($0.data.change, previous: $0.data.previous, current: $0.data.current) != nil }) {
            event, stores in
            let data = event.data
            guard let days = StreakMilestone.reached(data.change, previous: data.previous, current: data.current),
                let recipient = try await stores.recipients.recipientOnceKnown(data.userID)
            else { return }
            try await inbox.deliver(
                .streakMilestone(recipient.language, days: days, attemptID: data.attemptID), kind: .streakMilestone,
                key: "streak-milestone:\(data.attemptID.key):\(days)", to: data.userID, at: data.changedAt, connection: stores.connection, logger: stores.logger)
        }
        routes.on(BadgeAwarded.self) { event, stores in
            let data = event.data
            // A backfilled badge is filed quietly: not news to congratulate on. A winner whose registration (on another
            // partition) has not been handled yet is waited for.
            guard !data.backfilled, let recipient = try await stores.recipients.recipientOnceKnown(data.userID)
            else { return }
            try await inbox.deliver(
                .badgeEarned(recipient.language, badge: data.title), kind: .badgeEarned, key: "badge:\(data.badgeID):\(data.level):\(data.period)",
                to: data.userID, at: data.awardedAt, connection: stores.connection, logger: stores.logger)
        }
        routes.on(FriendshipChanged.self) { event, stores in
            let data = event.data
            let store = stores.recipients
            guard data.status == .requested, try await !store.isErased(data.requesterID), try await !store.isErased(data.addresseeID) else { return }
            guard let addressee = try await store.recipient(data.addresseeID) else { throw DirectoryLag(userID: data.addresseeID) }
            // Either registration travels on another partition: if it has not been handled yet, this event is parked
            // until it has (`DirectoryLag`), rather than telling or naming nobody.
            guard let requester = try await store.recipient(data.requesterID)?.displayName else { throw DirectoryLag(userID: data.requesterID) }
            try await inbox.deliver(
                .friendRequest(addressee.language, from: requester), kind: .friendRequest,
                key: "friend-request:\(data.requesterID.key):\(Int(data.changedAt.timeIntervalSince1970))", to: data.addresseeID, at: data.changedAt,
                connection: stores.connection, logger: stores.logger)
        }
        routes.on(ChallengeInvitationSent.self) { event, stores in
            let data = event.data
            // The invitee's registration travels on another topic: waited for, as a friend request's addressee is.
            guard let invitee = try await stores.recipients.recipientOnceKnown(data.inviteeID) else { return }
            try await inbox.deliver(
                .challengeInvitation(invitee.language, challenge: data.challengeName, challengeID: data.challengeID), kind: .challengeInvitation,
                key: "invitation:\(data.invitationID.key)", to: data.inviteeID, at: data.sentAt, connection: stores.connection, logger: stores.logger)
        }
        // Whoever this user moved past on the board hears of it: once per board and slot, whichever of its windows (week,
        // month, all time) the move showed in. A batch's rank changes name the same users again and again: they are
        // gathered and told together when the batch's transaction body ends (`BeforeCommit`).
        routes.on(RankChanged.self, when: { !$0.data.overtook.isEmpty }) { event, stores in
            try await overtaken(event.data, inbox: inbox, stores: stores)
        }
    }

    static func overtaken(_ change: RankChanged, inbox: Inbox, stores: NotificationStores) async throws {
        try await BeforeCommit.gather(change, on: stores.connection, logger: stores.logger) { changes, connection, logger in
            try await tellOvertaken(changes, inbox: inbox, stores: NotificationStores(connection: connection, logger: logger))
        }
    }

    /// The changes' overtaken notifications: the users they name read in one query, the notifications written in one
    /// statement. A registration not handled yet (another partition) parks the event, as for a friend request: in a
    /// batch, the whole batch goes one event at a time, and only the event naming that user waits.
    static func tellOvertaken(_ changes: [RankChanged], inbox: Inbox, stores: NotificationStores) async throws {
        let store = stores.recipients
        let named = Array(Set(changes.flatMap { [$0.userID] + $0.overtook }))
        let recipients = try await store.recipients(named)
        for userID in named where recipients[userID] == nil {
            if try await !store.isErased(userID) { throw DirectoryLag(userID: userID) }
        }
        var replacements: [Inbox.Replacement] = []
        for change in changes {
            let name = recipients[change.userID]?.displayName ?? "Someone"
            let key = "overtaken:\(change.board):\(Int(change.changedAt.timeIntervalSince1970 / overtakenWindow))"
            var told = Set<UUID>()
            for overtaken in change.overtook where told.insert(overtaken).inserted {
                guard let recipient = recipients[overtaken] else { continue }
                replacements.append(Inbox.Replacement(
                    notification: NewNotification(
                        userID: overtaken, kind: .overtaken, key: key, message: .overtaken(recipient.language, by: name, board: change.board)),
                    time: change.changedAt))
            }
        }
        try await inbox.replace(replacements, recipients: recipients, connection: stores.connection, logger: stores.logger)
    }
}

extension ReminderHandlers {
    /// A habit's new definition (or version): its reminder time moves the pending reminders of everyone doing it.
    static func habitDefinition(_ definition: ChallengeDefinition, at instant: Date, stores: NotificationStores) async throws {
        let habits = stores.habits
        guard try await habits.noteDefinition(definition) else { return }
        let recipients = stores.recipients
        for userID in try await habits.users(of: definition.challengeID) {
            guard let recipient = try await recipients.recipient(userID) else { continue }
            try await habits.reschedule(recipient, now: instant)
        }
    }
}
