import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NotificationsDomain
import SurgeMessaging
import SurgeRuntime

/// Reminders at the right local time and the in-app inbox: recipients and preferences from identity's events, daily
/// reminders sent by a scheduler that reads only what is due, and notifications about badges, friend requests,
/// invitations and being overtaken, each written once; signed webhooks to the URLs users subscribe.
public enum NotificationsService {
    public static var api: [APIOperation] { NotificationsAPI.all }

    struct Settings {
        var reminderInterval: Duration

        static func from(_ reader: EnvironmentReader) throws -> Settings {
            Settings(reminderInterval: .milliseconds(try reader.int("REMINDER_INTERVAL_MS", default: 1000, range: 10...60_000)))
        }
    }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let notifications = try Settings.from(settings.reader)
        let webhookSettings = try WebhookSettings.from(settings.reader)
        let infrastructure = try await ServiceInfrastructure.start(settings, migrations: [NotificationsMigrations.set])
        let logger = infrastructure.logger
        let clock = infrastructure.clock
        let inbox = Inbox(outbox: infrastructure.outbox, webhooks: WebhookQueue(clock: clock))
        var handlers = EventHandlers()
        NotificationsEvents.register(in: &handlers, inbox: inbox)
        let consumer = try infrastructure.consumer(handlers)
        let router = infrastructure.makeRouter(consumers: [consumer])
        InboxController(client: infrastructure.database, logger: logger).addRoutes(to: router)
        WebhooksController(client: infrastructure.database, settings: webhookSettings, clock: clock, logger: logger).addRoutes(to: router)
        let scheduler = ReminderScheduler(client: infrastructure.database, inbox: inbox, logger: logger)
        let http = HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: WebhookDispatcher.clientConfiguration(timeout: webhookSettings.attemptTimeout))
        let dispatcher = WebhookDispatcher(
            client: infrastructure.database, outbox: infrastructure.outbox, http: http, settings: webhookSettings, clock: clock, logger: logger)
        return infrastructure.makeApplication(
            router: router, consumers: [consumer],
            services: [
                HTTPClientService(client: http),
                PeriodicService("reminders", every: notifications.reminderInterval, logger: logger) { try await scheduler.sendDue(now: clock.now()) },
                PeriodicService("webhooks", every: webhookSettings.interval, logger: logger) { try await dispatcher.sendDue() },
            ])
    }
}
