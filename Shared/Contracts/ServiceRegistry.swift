/// The one registry of Surge's services. Everything outside a service's folder that needs to know the services
/// (the gateway's upstreams and data export, the API catalogue, the topic catalogue, the scripts, docker-compose.yml,
/// deploy/k8s, the test harness) reads this list or is checked against it by `RegistryConsistencyTests`.
///
/// Adding a service: copy `Services/Template`, add a case and its entry here, add its targets to Package.swift with
/// `service(...)`, run `make contracts`. docs/architecture.md has the recipe.
public enum SurgeService: String, Sendable, CaseIterable {
    case gateway, identity, challenges, progress, leaderboard, badges, notifications, analytics
    /// `Services/Template`: built and tested like the others, never deployed; new services start as a copy of it.
    case template

    public var consumerGroup: String { "surge-\(rawValue)" }
    public var executable: String { "surge-\(rawValue)" }
    /// The PostgreSQL schema and the login role's suffix (`surge_<name>`).
    public var schema: String { rawValue }

    public var entry: ServiceEntry {
        switch self {
        case .gateway:
            ServiceEntry(
                port: 8080, topic: nil, exportsUserData: false,
                owns: "the only public door: routing, access tokens, rate limits, idempotency keys, CORS, data export, the live event stream",
                variables: [
                    "UPSTREAM_URL_TEMPLATE", "UPSTREAM_TIMEOUT_SECONDS", "IDENTITY_JWKS_URL", "RATE_LIMIT_PER_IP_PER_MINUTE", "RATE_LIMIT_PER_USER_PER_MINUTE",
                    "RATE_LIMIT_CREDENTIALS_PER_MINUTE", "TRUSTED_PROXY_HOPS", "CORS_ALLOWED_ORIGINS", "CORS_MAX_AGE_SECONDS",
                    "MAX_REQUEST_BYTES", "MAX_UPLOAD_BYTES", "STREAM_QUEUE_LIMIT", "STREAM_CONNECTIONS_PER_USER", "STREAM_CONNECTIONS_PER_REPLICA", "STREAM_REPLAY_EVENTS",
                    "STREAM_REPLAY_SECONDS", "STREAM_HEARTBEAT_SECONDS", "CHART_JS_PATH",
                ])
        case .identity:
            ServiceEntry(
                port: 8081, topic: .identity, exportsUserData: true,
                owns: "accounts, guests, social sign-in, tokens, profiles and preferences, onboarding, friends, groups and households",
                variables: [
                    "JWT_SIGNING_KEY", "JWT_SIGNING_KEY_ID", "JWT_RETIRED_PUBLIC_KEYS", "ACCESS_TOKEN_TTL_SECONDS", "REFRESH_TOKEN_TTL_DAYS",
                    "BCRYPT_COST", "APPLE_CLIENT_IDS", "GOOGLE_CLIENT_IDS", "APPLE_JWKS_URL", "GOOGLE_JWKS_URL", "INVITE_LINK_BASE",
                    "PASSWORD_RESET_TTL_MINUTES", "EMAIL_VERIFICATION_TTL_HOURS", "PASSWORD_RESET_LINK_BASE", "EMAIL_VERIFICATION_LINK_BASE",
                    "NOTIFICATIONS_URL", "MAIL_RELAY_INTERVAL_MS",
                ])
        case .challenges:
            ServiceEntry(
                port: 8082, topic: .challenges, exportsUserData: true,
                owns: "the catalogue: curated challenges, competitions, habits, chores, weekly challenges, versions, search",
                variables: ["TRENDING_REFRESH_SECONDS"])
        case .progress:
            ServiceEntry(
                port: 8083, topic: .progress, exportsUserData: true,
                owns: "attempts, check-ins, days judged in the user's time zone, streaks, points ledger, chores, photos",
                variables: ["JUDGEMENT_INTERVAL_MS", "JUDGEMENT_BATCH_SIZE", "PHOTO_MAX_BYTES"])
        case .leaderboard:
            ServiceEntry(
                port: 8084, topic: .leaderboard, exportsUserData: true,
                owns: "rankings per challenge, competition, group and friends; weekly, monthly and all-time windows with history",
                variables: ["WINDOW_CLOSE_INTERVAL_MS"])
        case .badges:
            ServiceEntry(
                port: 8085, topic: .badges, exportsUserData: true,
                owns: "the badge catalogue, facts kept per user (counts, best streaks), awards once per period, backfill of new badges",
                variables: ["BADGE_CATALOGUE_FILE"])
        case .notifications:
            ServiceEntry(
                port: 8086, topic: .notifications, exportsUserData: true,
                owns: "daily reminders at the user's local time (quiet hours, DST), the in-app inbox of badges, friend requests, invitations, overtakes, push to FCM and APNs, signed webhooks",
                variables: [
                    "REMINDER_INTERVAL_MS", "REMINDER_BATCH_SIZE", "REMINDER_LANES", "REMINDER_MAX_LATENESS_MINUTES", "PUSH_INTERVAL_MS", "PUSH_CONCURRENCY", "PUSH_CA_FILE", "PUSH_MAX_ATTEMPTS", "PUSH_RETRY_BASE_MS", "PUSH_GIVE_UP_AFTER_SECONDS",
                    "FCM_CREDENTIALS", "FCM_CREDENTIALS_FILE", "FCM_PROJECT_ID", "FCM_ENDPOINT", "FCM_TOKEN_URI", "APNS_KEY", "APNS_KEY_FILE",
                    "APNS_KEY_ID", "APNS_TEAM_ID", "APNS_TOPIC", "APNS_ENDPOINT", "WEBHOOKS_ALLOW_HTTP", "WEBHOOKS_ALLOW_PRIVATE_TARGETS",
                    "WEBHOOKS_INTERVAL_MS", "WEBHOOKS_TIMEOUT_SECONDS", "WEBHOOKS_DISABLE_AFTER_SECONDS", "WEBHOOKS_DISABLE_AFTER_FAILURES",
                    "WEBHOOKS_ROTATION_GRACE_SECONDS", "EMAIL_PROVIDER_URL", "EMAIL_PROVIDER_TOKEN", "EMAIL_FROM", "EMAIL_INTERVAL_MS",
                    "EMAIL_WEBHOOK_SECRET",
                ])
        case .analytics:
            ServiceEntry(
                port: 8087, topic: nil, exportsUserData: false,
                owns: "the product KPIs (retention, start, check-in, completion, streak and restart rates) from the public topics, for admins")
        case .template:
            ServiceEntry(
                port: 8099, topic: nil, exportsUserData: true, owns: "the pattern every service follows, in miniature", deployed: false,
                variables: ["TALLY_MILESTONE_EVERY"])
        }
    }

    /// The services a deployment runs: every one but the template.
    public static var deployed: [SurgeService] { allCases.filter(\.entry.deployed) }

    /// The deployed services in the order a stack starts them: the gateway last, as it waits for the services it routes to.
    public static var startOrder: [SurgeService] { deployed.filter { $0 != .gateway } + [.gateway] }

    /// The deployed services that keep data about users and answer `GET /internal/export`.
    public static var exporting: [SurgeService] { deployed.filter(\.entry.exportsUserData) }
}

/// What the rest of the system needs to know about one service.
public struct ServiceEntry: Sendable {
    /// Where it listens by default (`HTTP_PORT`), locally and in every deployment file.
    public let port: Int
    /// The topic it produces, if any.
    public let topic: Topic?
    /// Whether the gateway's data export asks it for the caller's data.
    public let exportsUserData: Bool
    /// What it owns, as the README's table says.
    public let owns: String
    /// Environment variables only this service reads (the shared ones are `ServiceSettings`').
    public let variables: [String]
    /// Whether deployments (scripts, compose, Kubernetes, the gateway's routes) run it.
    public let deployed: Bool

    public init(port: Int, topic: Topic?, exportsUserData: Bool, owns: String, deployed: Bool = true, variables: [String] = []) {
        self.port = port
        self.topic = topic
        self.exportsUserData = exportsUserData
        self.owns = owns
        self.deployed = deployed
        self.variables = variables
    }
}
