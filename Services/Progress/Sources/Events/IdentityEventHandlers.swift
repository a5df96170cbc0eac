import SurgeContracts
import SurgeMessaging

/// Keeps the members table in step with identity's account events.
enum IdentityEventHandlers {
    static func register(in handlers: inout EventHandlers) {
        handlers.on(UserRegistered.self) { event, connection, logger in
            try await MemberStore.upsert(Member(userID: event.data.userID, timeZone: event.data.timeZone), on: connection, logger: logger)
        }
    }
}
