/// The one registry of Surge's services. Everything outside a service's folder that needs to know the services
/// (the gateway's upstreams and data export, the API catalogue, the topic catalogue, the scripts, docker-compose.yml,
/// deploy/k8s, the test harness) reads this list, is written from it (`RegistryFiles`) or is checked against it by
/// `RegistryConsistencyTests`.
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
                owns: "the only public door: routing, access tokens, rate limits, idempotency keys, CORS, data export, the live event stream (docs/stream.md)",
                variables: [
                    "UPSTREAM_URL_TEMPLATE", "UPSTREAM_TIMEOUT_SECONDS", "IDENTITY_JWKS_URL", "RATE_LIMIT_PER_IP_PER_MINUTE", "RATE_LIMIT_PER_USER_PER_MINUTE",
                    "RATE_LIMIT_CREDENTIALS_PER_MINUTE", "TRUSTED_PROXY_HOPS", "CORS_ALLOWED_ORIGINS", "CORS_MAX_AGE_SECONDS",
                    "MAX_REQUEST_BYTES", "MAX_UPLOAD_BYTES", "STREAM_QUEUE_LIMIT", "STREAM_CONNECTIONS_PER_USER", "STREAM_CONNECTIONS_PER_REPLICA", "STREAM_REPLAY_EVENTS",
                    "STREAM_REPLAY_SECONDS", "STREAM_HEARTBEAT_SECONDS", "CHART_JS_PATH",
                ],
                deployment: .init(
                    replicas: .autoscaled(max: 10),
                    resources: .init(
                        requests: .init(cpu: "300m", memory: "128Mi"), limits: .init(cpu: "2", memory: "384Mi"),
                        basis: "Measured by `make bench` (checkin-throughput, README): 0.27 cores and 82 MiB peak RSS at 433 check-ins/s; 1,000 idle live streams add about 49 MiB (stream benchmark)."),
                    environment: [
                        .init("UPSTREAM_URL_TEMPLATE", .upstreamURLTemplate),
                        .init("UPSTREAM_TIMEOUT_SECONDS", .literal("30"), note: "How long it waits for an internal service."),
                    ]))
        case .identity:
            ServiceEntry(
                port: 8081, topic: .identity, exportsUserData: true,
                owns: "accounts, guests, social sign-in, tokens, profiles and preferences, onboarding, friends, groups and households",
                variables: [
                    "JWT_SIGNING_KEY", "JWT_SIGNING_KEY_ID", "JWT_RETIRED_PUBLIC_KEYS", "ACCESS_TOKEN_TTL_SECONDS", "REFRESH_TOKEN_TTL_DAYS",
                    "BCRYPT_COST", "APPLE_CLIENT_IDS", "GOOGLE_CLIENT_IDS", "APPLE_JWKS_URL", "GOOGLE_JWKS_URL", "INVITE_LINK_BASE",
                    "PASSWORD_RESET_TTL_MINUTES", "EMAIL_VERIFICATION_TTL_HOURS", "PASSWORD_RESET_LINK_BASE", "EMAIL_VERIFICATION_LINK_BASE",
                    "NOTIFICATIONS_URL", "MAIL_RELAY_INTERVAL_MS",
                ],
                deployment: .init(
                    resources: .idle(
                        basis: "Measured by `make bench` (README): idle RSS 48 MiB, peak 51 MiB; a password sign-in costs one bcrypt hash of CPU (BCRYPT_COST), so raise the CPU request for sign-in-heavy traffic."),
                    environment: [
                        .init("JWT_SIGNING_KEY", .requiredSecret),
                        .init("JWT_SIGNING_KEY_ID", .secret(default: "primary")),
                        .init("JWT_RETIRED_PUBLIC_KEYS", .secret()),
                        .init("APPLE_CLIENT_IDS", .secret()),
                        .init("GOOGLE_CLIENT_IDS", .secret()),
                        .init("NOTIFICATIONS_URL", .url(of: .notifications), note: "Account mails (reset and verification links) are handed to the notification service here."),
                    ]))
        case .challenges:
            ServiceEntry(
                port: 8082, topic: .challenges, exportsUserData: true,
                owns: "the catalogue: curated challenges, competitions, habits, chores, weekly challenges, versions, search",
                variables: ["TRENDING_REFRESH_SECONDS"])
        case .progress:
            ServiceEntry(
                port: 8083, topic: .progress, exportsUserData: true,
                owns: "attempts, check-ins, days judged in the user's time zone, streaks, pauses and vacations, points ledger, chores, photos",
                variables: ["JUDGEMENT_INTERVAL_MS", "JUDGEMENT_BATCH_SIZE", "PHOTO_MAX_BYTES"],
                deployment: .init(
                    replicas: .autoscaled(max: 12, why: "More replicas than the 12 partitions of a topic add no consumer parallelism."),
                    resources: .init(
                        requests: .init(cpu: "500m", memory: "96Mi"), limits: .init(cpu: "2", memory: "256Mi"),
                        basis: "Measured by `make bench` (checkin-throughput, README): 0.65 cores and 57 MiB peak RSS at 433 check-ins/s (the HPA adds a replica above 70% of the request, about 230 check-ins/s per replica).")))
        case .leaderboard:
            ServiceEntry(
                port: 8084, topic: .leaderboard, exportsUserData: true,
                owns: "rankings per challenge, competition, group and friends: weekly, monthly and all-time windows with history (docs/leaderboard.md)",
                variables: ["WINDOW_CLOSE_INTERVAL_MS"],
                deployment: .init(
                    resources: .init(
                        requests: .init(cpu: "200m", memory: "160Mi"), limits: .init(cpu: "1", memory: "512Mi"),
                        basis: "Measured by `make bench` (checkin-throughput, README): 0.19 cores and 88 MiB peak RSS at 433 check-ins/s. Every replica holds the current boards in memory: add about 65 MiB per million board entries (leaderboard benchmark).")))
        case .badges:
            ServiceEntry(
                port: 8085, topic: .badges, exportsUserData: true,
                owns: "achievements from a rule catalogue kept as data: facts per user, each badge level awarded once per period, backfill of new badges (docs/badges.md)",
                variables: ["BADGE_CATALOGUE_FILE"])
        case .notifications:
            ServiceEntry(
                port: 8086, topic: .notifications, exportsUserData: true,
                owns: "daily reminders at each user's local time (quiet hours, DST), the in-app inbox: badges, friend requests, invitations, overtakes, push to FCM and APNs devices, signed webhooks (docs/notifications.md)",
                variables: [
                    "REMINDER_INTERVAL_MS", "REMINDER_BATCH_SIZE", "REMINDER_LANES", "REMINDER_MAX_LATENESS_MINUTES", "PUSH_INTERVAL_MS", "PUSH_CONCURRENCY", "PUSH_CA_FILE", "PUSH_MAX_ATTEMPTS", "PUSH_RETRY_BASE_MS", "PUSH_GIVE_UP_AFTER_SECONDS",
                    "FCM_CREDENTIALS", "FCM_CREDENTIALS_FILE", "FCM_PROJECT_ID", "FCM_ENDPOINT", "FCM_TOKEN_URI", "APNS_KEY", "APNS_KEY_FILE",
                    "APNS_KEY_ID", "APNS_TEAM_ID", "APNS_TOPIC", "APNS_ENDPOINT", "WEBHOOKS_ALLOW_HTTP", "WEBHOOKS_ALLOW_PRIVATE_TARGETS",
                    "WEBHOOKS_INTERVAL_MS", "WEBHOOKS_TIMEOUT_SECONDS", "WEBHOOKS_DISABLE_AFTER_SECONDS", "WEBHOOKS_DISABLE_AFTER_FAILURES",
                    "WEBHOOKS_ROTATION_GRACE_SECONDS", "EMAIL_PROVIDER_URL", "EMAIL_PROVIDER_TOKEN", "EMAIL_FROM", "EMAIL_INTERVAL_MS",
                    "EMAIL_WEBHOOK_SECRET",
                ],
                deployment: .init(
                    environment: [
                        "FCM_CREDENTIALS", "APNS_KEY", "APNS_KEY_ID", "APNS_TEAM_ID", "APNS_TOPIC", "APNS_ENDPOINT", "EMAIL_PROVIDER_URL", "EMAIL_PROVIDER_TOKEN",
                        "EMAIL_FROM", "EMAIL_WEBHOOK_SECRET",
                    ].map { .init($0, .secret()) }))
        case .analytics:
            ServiceEntry(
                port: 8087, topic: nil, exportsUserData: false,
                owns: "the product KPIs of 000 (Day-7 retention, first-session start rate, daily check-in rate, completion, streak before a break, restart rate) projected from the public topics, for admins; `surge-analytics rebuild` replays them from offset zero (docs/analytics.md)")
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
    /// What it owns: the README's table of what runs.
    public let owns: String
    /// Environment variables only this service reads (the shared ones are `ServiceSettings`').
    public let variables: [String]
    /// Whether deployments (scripts, compose, Kubernetes, the gateway's routes) run it.
    public let deployed: Bool
    public let deployment: Deployment

    public init(
        port: Int, topic: Topic?, exportsUserData: Bool, owns: String, deployed: Bool = true, variables: [String] = [],
        deployment: Deployment = .init()
    ) {
        self.port = port
        self.topic = topic
        self.exportsUserData = exportsUserData
        self.owns = owns
        self.deployed = deployed
        self.variables = variables
        self.deployment = deployment
    }

    /// What docker-compose.yml and the service's Kubernetes manifest say differently from one service to another
    /// (`RegistryFiles` writes both); everything else in them is the same for every service.
    public struct Deployment: Sendable {
        public enum Replicas: Sendable {
            case fixed(Int)
            /// A HorizontalPodAutoscaler owns the count: 2 to `max` replicas, aiming at 70% of the CPU request.
            case autoscaled(max: Int, why: String? = nil)
        }

        public struct Resources: Sendable {
            public struct Amounts: Sendable {
                public let cpu: String
                public let memory: String
            }

            public let requests: Amounts
            public let limits: Amounts
            /// Where the figures come from, written above them in the manifest.
            public let basis: String

            /// For a service `make bench` does not load.
            public static func idle(
                basis: String = "Not loaded by `make bench`: sized from the idle RSS every service shows there (43-48 MiB) with room to grow."
            ) -> Resources {
                Resources(requests: Amounts(cpu: "100m", memory: "96Mi"), limits: Amounts(cpu: "1", memory: "256Mi"), basis: basis)
            }
        }

        /// A variable set for this service alone, beyond `HTTP_PORT` and `DATABASE_URL`.
        public struct Variable: Sendable {
            public enum Value: Sendable {
                case literal(String)
                /// `http://<host>:<port>` of that service, its host named as the deployment names it.
                case url(of: SurgeService)
                /// The gateway's `http://<host>:{port}`, `{service}` standing for each service's name in the host.
                case upstreamURLTemplate
                /// From `.env` in Compose, refused when unset; in Kubernetes from the `surge-<service>` Secret.
                case requiredSecret
                /// From `.env` in Compose, `default` when unset; in Kubernetes from the `surge-<service>` Secret.
                case secret(default: String = "")
            }

            public let name: String
            public let value: Value
            /// Written above it.
            public let note: String?

            public init(_ name: String, _ value: Value, note: String? = nil) {
                self.name = name
                self.value = value
                self.note = note
            }
        }

        public let replicas: Replicas
        public let resources: Resources
        public let environment: [Variable]

        public init(replicas: Replicas = .fixed(2), resources: Resources = .idle(), environment: [Variable] = []) {
            self.replicas = replicas
            self.resources = resources
            self.environment = environment
        }
    }
}
