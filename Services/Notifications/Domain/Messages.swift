import Foundation
import SurgeContracts

/// What Surge tells users about, each kind with its own texts and the screen the app opens.
public enum NotificationKind: String, Sendable, CaseIterable, Codable {
    case dailyReminder = "daily-reminder"
    case badgeEarned = "badge-earned"
    case friendRequest = "friend-request"
    case challengeInvitation = "challenge-invitation"
    case overtaken
    case streakMilestone = "streak-milestone"
    case streakAtRisk = "streak-at-risk"
    case reEngagement = "re-engagement"
    case weeklyDigest = "weekly-digest"
    case closeToGoal = "close-to-goal"
    case choreDue = "chore-due"
    case habitReminder = "habit-reminder"
}

/// A notification's words in the user's language (English and Italian; English for any other locale).
public struct Message: Sendable, Equatable {
    public var title: String
    public var body: String
    /// The screen the app opens: `surge://attempts`, `surge://badges`...
    public var deepLink: String

    public enum Language: String, Sendable {
        case english = "en", italian = "it"

        /// `it-IT`, `it_CH`, `it` are Italian; anything else (or nothing) English.
        public init(locale: String?) {
            let language = locale?.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map(String.init)
            self = language == "it" ? .italian : .english
        }
    }

    public static func dailyReminder(_ language: Language) -> Message {
        switch language {
        case .english: Message(title: "Time to check in", body: "Keep your streak going: today's tasks are waiting.", deepLink: "surge://today")
        case .italian: Message(title: "È ora del check-in", body: "Mantieni la tua serie: le attività di oggi ti aspettano.", deepLink: "surge://today")
        }
    }

    public static func badgeEarned(_ language: Language, badge: String) -> Message {
        switch language {
        case .english: Message(title: "🏆 Badge earned", body: "Congratulations, you earned the \(badge) badge!", deepLink: "surge://badges")
        case .italian: Message(title: "🏆 Nuovo badge", body: "Complimenti, hai ottenuto il badge \(badge)!", deepLink: "surge://badges")
        }
    }

    public static func friendRequest(_ language: Language, from name: String) -> Message {
        switch language {
        case .english: Message(title: "Friend request", body: "\(name) wants to be your friend.", deepLink: "surge://friends/requests")
        case .italian: Message(title: "Richiesta di amicizia", body: "\(name) vuole essere tuo amico.", deepLink: "surge://friends/requests")
        }
    }

    public static func challengeInvitation(_ language: Language, challenge: String, challengeID: UUID) -> Message {
        switch language {
        case .english:
            Message(title: "You're invited", body: "Join the challenge \(challenge).", deepLink: "surge://challenges/\(challengeID.uuidString.lowercased())")
        case .italian:
            Message(title: "Sei stato invitato", body: "Partecipa alla sfida \(challenge).", deepLink: "surge://challenges/\(challengeID.uuidString.lowercased())")
        }
    }

    public static func overtaken(_ language: Language, by name: String, board: String) -> Message {
        switch language {
        case .english: Message(title: "You've been overtaken", body: "\(name) just passed you. Win your place back!", deepLink: "surge://leaderboards/\(board)")
        case .italian: Message(title: "Sei stato superato", body: "\(name) ti ha appena superato. Riprenditi il posto!", deepLink: "surge://leaderboards/\(board)")
        }
    }

    public static func streakMilestone(_ language: Language, days: Int, attemptID: UUID) -> Message {
        let link = "surge://attempts/\(attemptID.uuidString.lowercased())"
        switch language {
        case .english: return Message(title: "🔥 \(days)-day streak!", body: "\(days) days in a row. Keep it going!", deepLink: link)
        case .italian: return Message(title: "🔥 Serie di \(days) giorni!", body: "\(days) giorni di fila. Continua così!", deepLink: link)
        }
    }

    public static func streakAtRisk(_ language: Language, attemptID: UUID) -> Message {
        let link = "surge://attempts/\(attemptID.uuidString.lowercased())"
        switch language {
        case .english: return Message(title: "Your streak is at risk", body: "Two days without a check-in: one today keeps it alive.", deepLink: link)
        case .italian: return Message(title: "La tua serie è a rischio", body: "Due giorni senza check-in: uno oggi la tiene viva.", deepLink: link)
        }
    }

    public static func reEngagement(_ language: Language) -> Message {
        switch language {
        case .english:
            Message(title: "We miss you", body: "It's been a couple of days. A small check-in today gets you back on track.", deepLink: "surge://today")
        case .italian:
            Message(title: "Ci manchi", body: "Sono passati un paio di giorni. Un piccolo check-in oggi ti rimette in carreggiata.", deepLink: "surge://today")
        }
    }

    /// `remaining` of `unit` (a task's own word, e.g. `push-ups`) still to go today.
    public static func closeToGoal(_ language: Language, remaining: Double, unit: String?, attemptID: UUID) -> Message {
        let link = "surge://attempts/\(attemptID.uuidString.lowercased())"
        let amount = [remaining.rounded(.up) == remaining ? String(Int(remaining)) : String(format: "%.1f", remaining), unit].compactMap { $0 }
            .joined(separator: " ")
        switch language {
        case .english: return Message(title: "Almost there", body: "Only \(amount) to go to reach today's goal!", deepLink: link)
        case .italian: return Message(title: "Ci sei quasi", body: "Mancano solo \(amount) per l'obiettivo di oggi!", deepLink: link)
        }
    }

    public static func choreDue(_ language: Language, chore: String, groupID: UUID) -> Message {
        let link = "surge://groups/\(groupID.uuidString.lowercased())/chores"
        switch language {
        case .english: return Message(title: "Chore due", body: "Reminder: “\(chore)” is due now.", deepLink: link)
        case .italian: return Message(title: "Faccenda da fare", body: "Promemoria: «\(chore)» è da fare adesso.", deepLink: link)
        }
    }

    /// A chore's reminder ahead of its due time (the chore's lead time), the time told in the assignee's zone.
    public static func choreDueSoon(_ language: Language, chore: String, dueAt time: LocalTime, groupID: UUID) -> Message {
        let link = "surge://groups/\(groupID.uuidString.lowercased())/chores"
        switch language {
        case .english: return Message(title: "Chore due soon", body: "Reminder: “\(chore)” is due at \(time).", deepLink: link)
        case .italian: return Message(title: "Faccenda in scadenza", body: "Promemoria: «\(chore)» è da fare entro le \(time).", deepLink: link)
        }
    }

    /// A habit's own reminder at its reminder time, opening its attempt.
    public static func habitReminder(_ language: Language, habit: String, attemptID: UUID) -> Message {
        let link = "surge://attempts/\(attemptID.uuidString.lowercased())"
        switch language {
        case .english: return Message(title: "Habit reminder", body: "Time for “\(habit)”.", deepLink: link)
        case .italian: return Message(title: "Promemoria abitudine", body: "È il momento di «\(habit)».", deepLink: link)
        }
    }

    public static func weeklyDigest(_ language: Language, completedDays: Int) -> Message {
        switch language {
        case .english:
            Message(
                title: "Your week in review", body: "You completed \(completedDays) of the last 7 days. A new weekly challenge starts today!",
                deepLink: "surge://statistics")
        case .italian:
            Message(
                title: "La tua settimana", body: "Hai completato \(completedDays) degli ultimi 7 giorni. Oggi inizia una nuova sfida settimanale!",
                deepLink: "surge://statistics")
        }
    }
}
