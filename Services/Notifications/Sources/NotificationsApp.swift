import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NotificationsDomain
import PostgresNIO
import ServiceLifecycle
import SurgeMessaging
import SurgeRuntime

/// Reminders at the right local time and the in-app inbox: recipients and preferences from identity's events, daily
/// reminders sent by a scheduler that reads only what is due, and notifications about badges, friend requests,
/// invitations and being overtaken, each written once, pushed to the user's devices when FCM or APNs is configured,
/// and signed webhooks to the URLs users subscribe.
public enum NotificationsService {
    public static var api: [APIOperation] { NotificationsAPI.all }

    struct Settings {
        var reminderInterval: Duration
        var reminderBatch: Int
        var reminderLanes: Int
        /// How late a reminder may still be sent (after downtime or a clock jump); later, it is dropped.
        var reminderMaxLateness: TimeInterval
        var push: PushSettings
        var email: EmailChannel.Settings?
        /// The secret the e-mail provider signs its reports (bounces, complaints) with; without it every report is refused.
        var emailWebhookSecret: WebhookSecret?
        var webhooks: WebhookSettings

        static func from(_ reader: EnvironmentReader) throws -> Settings {
            Settings(
                reminderInterval: .milliseconds(try reader.int("REMINDER_INTERVAL_MS", default: 250, range: 10...60_000)),
                reminderBatch: try reader.int("REMINDER_BATCH_SIZE", default: 1000, range: 1...10_000),
                reminderLanes: try reader.int("REMINDER_LANES", default: 2, range: 1...16),
                reminderMaxLateness: TimeInterval(
                    try reader.int("REMINDER_MAX_LATENESS_MINUTES", default: Int(ReminderLateness.defaultBound / 60), range: 1...1440) * 60),
                push: try PushSettings.from(reader), email: try EmailChannel.Settings.from(reader),
                emailWebhookSecret: try reader.string("EMAIL_WEBHOOK_SECRET").map { text in
                    guard let secret = WebhookSecret(text), secret.key.count >= 16 else {
                        throw ConfigurationError(variable: "EMAIL_WEBHOOK_SECRET", problem: "must be whsec_ and the base64 of at least 16 bytes")
                    }
                    return secret
                },
                webhooks: try WebhookSettings.from(reader))
        }
    }

    /// The stores over the service's database that the routes and the background services share.
    struct Stores {
        let database: PostgresClient
        let pushTokens: PushTokenStore
        let emails: EmailDeliveryStore
        let bounces: EmailBounceStore

        init(database: PostgresClient, logger: Logger) {
            self.database = database
            pushTokens = PushTokenStore(client: database, logger: logger)
            emails = EmailDeliveryStore(client: database, logger: logger)
            bounces = EmailBounceStore(client: database, logger: logger)
        }
    }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let notifications = try Settings.from(settings.reader)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [NotificationsMigrations.set])
        let logger = infrastructure.logger
        DeliveryMetrics.startAtZero()
        let push = ProviderHTTP(connections: notifications.push.concurrency, extraTrustRoots: notifications.push.extraTrustRoots)
        let mail = ProviderHTTP(connections: 8)
        let channels = try pushChannels(notifications.push, http: push, logger: logger)
        let clock = infrastructure.clock
        let inbox = Inbox(
            outbox: infrastructure.outbox, pushPlatforms: PushPlatform.allCases.filter { channels[$0] != nil }, webhooks: WebhookQueue(clock: clock), clock: clock)
        let consumer = try infrastructure.consumer(NotificationsEvents.routes(inbox: inbox, clock: clock).handlers)
        let router = infrastructure.makeRouter(consumers: [consumer])
        let stores = Stores(database: infrastructure.database, logger: logger)
        addRoutes(to: router, stores: stores, settings: notifications, clock: clock, logger: logger)
        let scheduler = ReminderScheduler(
            client: infrastructure.database, inbox: inbox, logger: logger, batch: notifications.reminderBatch, lanes: notifications.reminderLanes,
            maxLateness: notifications.reminderMaxLateness)
        let webhooks = notifications.webhooks
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: WebhookDispatcher.clientConfiguration(timeout: webhooks.attemptTimeout))
        let webhookDispatcher = WebhookDispatcher(
            client: infrastructure.database, outbox: infrastructure.outbox, http: http, settings: webhooks, clock: clock, logger: logger)
        var services: [any Service] = [
            HTTPClientService(client: http), HTTPClientService(client: push.client), HTTPClientService(client: mail.client),
            PeriodicService("reminders", every: notifications.reminderInterval, logger: logger) { try await scheduler.sendDue(now: clock.now()) },
            PeriodicService("webhooks", every: webhooks.interval, logger: logger) { try await webhookDispatcher.sendDue() },
        ]
        if !channels.isEmpty {
            let dispatcher = PushDispatcher(
                store: PushDeliveryStore(client: infrastructure.database, outbox: infrastructure.outbox, logger: logger), channels: channels,
                retry: notifications.push.retry, concurrency: notifications.push.concurrency, now: { clock.now() }, logger: logger)
            services.append(PeriodicService("push", every: notifications.push.interval, logger: logger) { try await dispatcher.sendDue() })
        }
        logger.info("Push channels", metadata: ["on": "\(channels.keys.map(\.rawValue).sorted())"])
        let emailDispatcher = EmailDispatcher(
            store: stores.emails, channel: notifications.email.map { EmailChannel(settings: $0, http: mail, logger: logger) }, retry: EmailDispatcher.defaultRetry,
            now: { clock.now() }, logger: logger)
        services.append(PeriodicService("email", every: notifications.email?.interval ?? .seconds(1), logger: logger) { try await emailDispatcher.sendDue() })
        services.append(
            PeriodicService("email-pruning", every: .seconds(3600), logger: logger) {
                try await stores.emails.prune(now: clock.now())
                try await stores.bounces.prune(now: clock.now())
            })
        logger.info("E-mail channel", metadata: ["on": "\(notifications.email != nil)", "bounce-reports": "\(notifications.emailWebhookSecret != nil)"])
        return infrastructure.makeApplication(router: router, consumers: [consumer], services: services)
    }

    /// Every route of the service over its stores: what `buildApplication` serves, and what router tests build without
    /// starting the service.
    static func addRoutes(to router: Router<SurgeRequestContext>, stores: Stores, settings: Settings, clock: ServiceClock, logger: Logger) {
        InboxController(client: stores.database, pushTokens: stores.pushTokens, logger: logger).addRoutes(to: router)
        PushTokensController(tokens: stores.pushTokens, now: { clock.now() }).addRoutes(to: router)
        WebhooksController(client: stores.database, settings: settings.webhooks, clock: clock, logger: logger).addRoutes(to: router)
        MailController(store: stores.emails, now: { clock.now() }).addRoutes(to: router)
        let verifier = settings.emailWebhookSecret.map { WebhookVerifier(secret: $0) }
        EmailProviderEventsController(verifier: verifier, bounces: stores.bounces, now: { clock.now() }).addRoutes(to: router)
    }

    /// The providers whose credentials are configured; the others are off.
    static func pushChannels(_ settings: PushSettings, http: ProviderHTTP, logger: Logger) throws -> [PushPlatform: any DeliveryChannel<PushMessage>] {
        var channels: [PushPlatform: any DeliveryChannel<PushMessage>] = [:]
        if let fcm = settings.fcm { channels[.fcm] = try FCMChannel(settings: fcm, http: http, logger: logger) }
        if let apns = settings.apns { channels[.apns] = try APNsChannel(settings: apns, http: http, logger: logger) }
        return channels
    }
}
