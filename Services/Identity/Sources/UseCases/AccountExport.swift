import Foundation
import IdentityDomain
import SurgeRuntime

/// Everything identity keeps about one user, read in one repeatable-read snapshot so the parts agree.
struct AccountExport: Sendable {
    let storage: IdentityStorage
    let clock: ServiceClock

    func export(_ userID: UUID) async throws -> IdentityExport? {
        let now = clock.now()
        return try await storage.snapshot { stores in
            guard let account = try await stores.accounts.account(userID) else { return nil }
            let password = try await stores.accounts.passwordTimes(of: userID).map {
                IdentityExport.PasswordCredential(createdAt: $0.createdAt, updatedAt: $0.updatedAt)
            }
            let social = try await stores.accounts.linkedIdentities(of: userID)
            let (preferences, preferencesUpdatedAt) = try await stores.accounts.preferences(userID)
            let plan = try await stores.accounts.trainingPlan(userID).map { plan, updatedAt in
                IdentityExport.TrainingPlanRecord(
                    activityLevel: plan.answers.activityLevel, maxPushUpsInOneSet: plan.answers.maxPushUpsInOneSet,
                    daysPerWeek: plan.answers.daysPerWeek, dailyGoal: plan.dailyGoal, startingSeries: plan.startingSeries,
                    recoverySeconds: plan.recoverySeconds, updatedAt: updatedAt)
            }
            let friends = try await stores.friends.allFriends(of: userID)
            let requests = try await stores.friends.allRequests(of: userID)
            let groups = try await stores.groups.memberships(of: userID)
            // A session is a refresh-token family with a current (unused, unrevoked, unexpired) token.
            let sessions = try await stores.sessions.exportedSessions(of: userID, at: now)
            return IdentityExport(
                service: "identity", exportedAt: now, account: account,
                credentials: .init(password: password, socialIdentities: social),
                preferences: .init(
                    notificationsEnabled: preferences.notificationsEnabled, dailyReminderTime: preferences.dailyReminderTime,
                    quietHours: preferences.quietHours, disabledCategories: preferences.disabledCategories, telemetryOptOut: preferences.telemetryOptOut,
                    updatedAt: preferencesUpdatedAt),
                trainingPlan: plan, friends: friends,
                friendRequests: .init(
                    incoming: requests.filter { $0.addressee.id == userID }, outgoing: requests.filter { $0.requester.id == userID }),
                groups: groups, sessions: sessions)
        }
    }
}
