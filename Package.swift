// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

/// Release executables on Linux are linked by the toolchain's lld with packed relative relocations (a 25 KB table
/// instead of gold's 3 MB that the loader reads at every start) and without exporting every symbol to the dynamic
/// table (the static Swift runtime's link arguments ask for it; nothing in a service looks its own symbols up). Each
/// process starts with about 5 MiB less resident (docs/deployment.md, "The image").
let executableLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(
        ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"],
        .when(platforms: [.linux], configuration: .release)),
]

extension Target.Dependency {
    static let hummingbird = Target.Dependency.product(name: "Hummingbird", package: "hummingbird")
    static let hummingbirdHTTP2 = Target.Dependency.product(name: "HummingbirdHTTP2", package: "hummingbird")
    static let hummingbirdTesting = Target.Dependency.product(name: "HummingbirdTesting", package: "hummingbird")
    static let postgres = Target.Dependency.product(name: "PostgresNIO", package: "postgres-nio")
    static let connectionPool = Target.Dependency.product(name: "_ConnectionPoolModule", package: "postgres-nio")
    static let lifecycle = Target.Dependency.product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
    static let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
    static let metrics = Target.Dependency.product(name: "Metrics", package: "swift-metrics")
    static let prometheus = Target.Dependency.product(name: "Prometheus", package: "swift-prometheus")
    static let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
    static let httpClient = Target.Dependency.product(name: "AsyncHTTPClient", package: "async-http-client")
    static let jwt = Target.Dependency.product(name: "JWTKit", package: "jwt-kit")
    static let bcrypt = Target.Dependency.product(name: "HummingbirdBcrypt", package: "hummingbird-auth")
    static let nioSSL = Target.Dependency.product(name: "NIOSSL", package: "swift-nio-ssl")
    static let httpTypes = Target.Dependency.product(name: "HTTPTypes", package: "swift-http-types")
    static let crypto = Target.Dependency.product(name: "Crypto", package: "swift-crypto")
    static let cryptoExtras = Target.Dependency.product(name: "CryptoExtras", package: "swift-crypto")
    static let openAPIRuntime = Target.Dependency.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")
    static let openAPIAsyncHTTPClient = Target.Dependency.product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client")
}

/// Shared modules every service may import. Services never import each other.
let sharedTargets: [Target] = [
    .systemLibrary(
        name: "CRdKafka",
        path: "Shared/CRdKafka",
        pkgConfig: "rdkafka",
        providers: [.apt(["librdkafka-dev"])]
    ),
    .target(name: "SurgeKafka", dependencies: ["CRdKafka", .logging, .metrics, .lifecycle], path: "Shared/Kafka", swiftSettings: swiftSettings),
    .target(name: "SurgeContracts", path: "Shared/Contracts", swiftSettings: swiftSettings),
    .target(name: "SurgeCalendar", dependencies: ["SurgeContracts"], path: "Shared/Calendar", swiftSettings: swiftSettings),
    .target(name: "SurgeAuth", dependencies: ["SurgeContracts", .jwt, .logging], path: "Shared/Auth", swiftSettings: swiftSettings),
    .target(name: "SurgePostgres", dependencies: ["SurgeContracts", .postgres, .connectionPool, .nioSSL, .logging, .metrics, .lifecycle], path: "Shared/Postgres", swiftSettings: swiftSettings),
    .target(
        name: "SurgeMessaging",
        dependencies: ["SurgeKafka", "SurgePostgres", "SurgeContracts", .postgres, .logging, .metrics, .lifecycle],
        path: "Shared/Messaging",
        swiftSettings: swiftSettings
    ),
    .target(
        name: "SurgeRuntime",
        dependencies: ["SurgeKafka", "SurgePostgres", "SurgeMessaging", "SurgeContracts", .hummingbird, .httpTypes, .postgres, .logging, .metrics, .prometheus, .lifecycle, .crypto],
        path: "Shared/Runtime",
        swiftSettings: swiftSettings
    ),
]

/// Each service is a library (storage, events, API) plus a thin `surge-<name>` executable. A service with a
/// `Domain/` folder of its own gets a `<Name>Domain` module that may import only Contracts and Calendar, so the compiler
/// keeps its rules free of I/O.
func service(_ name: String, module: String, domain: Bool = false, dependencies: [Target.Dependency] = []) -> [Target] {
    let domainTargets: [Target] = domain
        ? [.target(name: "\(name)Domain", dependencies: ["SurgeContracts", "SurgeCalendar"], path: "Services/\(name)/Domain", swiftSettings: swiftSettings)]
        : []
    return domainTargets + [
        .target(
            name: module,
            dependencies: ["SurgeRuntime", "SurgeMessaging", "SurgeContracts", "SurgeCalendar", "SurgePostgres", .hummingbird, .postgres, .logging, .metrics]
                + (domain ? [.target(name: "\(name)Domain")] : []) + dependencies,
            path: "Services/\(name)/Sources",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "surge-\(name.lowercased())",
            dependencies: [.target(name: module), "SurgeRuntime"],
            path: "Services/\(name)/Main",
            swiftSettings: swiftSettings,
            linkerSettings: executableLinkerSettings
        ),
    ]
}

let serviceTargets: [Target] =
    service("Gateway", module: "GatewayService", domain: true, dependencies: ["SurgeAuth", "SurgeKafka", .httpClient, .httpTypes, .crypto, .nioSSL])
    + service("Identity", module: "IdentityService", domain: true, dependencies: ["SurgeAuth", .jwt, .bcrypt, .httpClient, .crypto])
    + service("Challenges", module: "ChallengesService", domain: true)
    + service("Progress", module: "ProgressService", domain: true)
    + service("Leaderboard", module: "LeaderboardService", domain: true, dependencies: [.lifecycle])
    + service("Badges", module: "BadgesService", domain: true, dependencies: ["SurgeKafka", .lifecycle])
    + service("Notifications", module: "NotificationsService", domain: true, dependencies: [.httpClient, .jwt, .crypto, .nioSSL])
    + service("Analytics", module: "AnalyticsService", domain: true)
    + service("Template", module: "TemplateService", domain: true)

let toolTargets: [Target] = [
    .executableTarget(
        name: "surge-broker",
        dependencies: ["SurgeKafka", "SurgeContracts", .argumentParser, .logging, .lifecycle],
        path: "Tools/Broker",
        swiftSettings: swiftSettings,
        linkerSettings: executableLinkerSettings
    ),
    .executableTarget(
        name: "surge-bench",
        dependencies: [
            "SurgeKafka", "SurgeMessaging", "SurgeContracts", "SurgeCalendar", "SurgePostgres", "SurgeRuntime", .argumentParser, .httpClient, .logging,
            .postgres, .hummingbird, .hummingbirdHTTP2, .nioSSL, .lifecycle,
        ],
        path: "Tools/Bench",
        swiftSettings: swiftSettings,
        linkerSettings: executableLinkerSettings
    ),
    .target(
        name: "SurgeAPICatalogue",
        dependencies: [
            "SurgeRuntime", "GatewayService", "IdentityService", "ChallengesService", "ProgressService", "LeaderboardService", "BadgesService",
            "NotificationsService", "AnalyticsService",
        ],
        path: "Tools/APICatalogue",
        swiftSettings: swiftSettings
    ),
    .target(name: "SurgeSimulation", dependencies: ["SurgeContracts", "SurgeCalendar"], path: "Tools/Simulation", swiftSettings: swiftSettings),
    .executableTarget(
        name: "surge-admin",
        dependencies: [
            "SurgeContracts", "SurgeCalendar", "SurgePostgres", "SurgeAPICatalogue", "SurgeSimulation", "IdentityService", .argumentParser, .logging,
            .postgres, .httpClient,
        ],
        path: "Tools/Admin",
        swiftSettings: swiftSettings,
        linkerSettings: executableLinkerSettings
    ),
]

let testTargets: [Target] = [
    // The Swift client swift-openapi-generator makes from docs/openapi.json, committed (`make client` regenerates it;
    // the generator is never built here, so CI does not pay for it). System tests drive the API through it.
    .target(
        name: "SurgeGeneratedClient",
        dependencies: [.openAPIRuntime, .openAPIAsyncHTTPClient],
        path: "Tests/GeneratedClient",
        exclude: ["openapi-generator-config.yaml", "openapi.json.sha256", "README.md"]
    ),
    .target(
        name: "SurgeTestSupport",
        dependencies: [
            "SurgeKafka", "SurgePostgres", "SurgeMessaging", "SurgeContracts", "SurgeRuntime", "SurgeSimulation", .postgres, .httpClient, .logging,
            .hummingbird, .hummingbirdTesting,
        ],
        path: "Tests/Support",
        swiftSettings: swiftSettings
    ),
    .testTarget(
        name: "ProgressTests",
        dependencies: [
            "ProgressService", "ProgressDomain", "SurgeCalendar", "SurgeContracts", "SurgeTestSupport", "SurgeRuntime", "SurgeMessaging",
            "SurgePostgres", .postgres, .logging, .hummingbird, .hummingbirdTesting,
        ],
        path: "Tests/ProgressTests", swiftSettings: swiftSettings),
    .testTarget(name: "RuntimeTests", dependencies: ["SurgeTestSupport", "SurgeRuntime", "SurgeContracts", "SurgePostgres", .connectionPool, .logging, .hummingbird, .hummingbirdTesting, .lifecycle], path: "Tests/RuntimeTests", swiftSettings: swiftSettings),
    .testTarget(
        name: "GatewayTests",
        dependencies: [
            "SurgeTestSupport", "GatewayService", "GatewayDomain", "SurgeRuntime", "SurgeContracts", "SurgeAuth", .hummingbird, .hummingbirdTesting,
            .postgres, .httpClient, .httpTypes, .logging,
        ],
        path: "Tests/GatewayTests", swiftSettings: swiftSettings),
    .testTarget(name: "CalendarTests", dependencies: ["SurgeTestSupport", "SurgeCalendar", "SurgeContracts"], path: "Tests/CalendarTests", swiftSettings: swiftSettings),
    .testTarget(name: "AuthTests", dependencies: ["SurgeTestSupport", "SurgeAuth", "SurgeContracts", .jwt], path: "Tests/AuthTests", swiftSettings: swiftSettings),
    .testTarget(name: "ContractsTests", dependencies: ["SurgeTestSupport", "SurgeContracts"], path: "Tests/ContractsTests", swiftSettings: swiftSettings),
    .testTarget(
        name: "APIContractTests",
        dependencies: ["SurgeTestSupport", "SurgeAPICatalogue", "GatewayService", "SurgeRuntime", "SurgeContracts", .hummingbird, .crypto],
        path: "Tests/APIContractTests", swiftSettings: swiftSettings),
    .testTarget(
        name: "ChallengesTests",
        dependencies: [
            "ChallengesService", "ChallengesDomain", "SurgeTestSupport", "SurgeRuntime", "SurgeContracts", "SurgeCalendar", "SurgeMessaging",
            "SurgePostgres", .postgres, .logging, .hummingbird, .hummingbirdTesting,
        ],
        path: "Tests/ChallengesTests", swiftSettings: swiftSettings),
    .testTarget(
        name: "TemplateTests", dependencies: ["SurgeTestSupport", "TemplateService", "TemplateDomain", "SurgeRuntime", "SurgeContracts", .hummingbird, .hummingbirdTesting],
        path: "Tests/TemplateTests", swiftSettings: swiftSettings),
    .testTarget(
        name: "LeaderboardTests",
        dependencies: [
            "SurgeTestSupport", "LeaderboardService", "LeaderboardDomain", "SurgeRuntime", "SurgeContracts", "SurgeCalendar", "SurgeMessaging",
            "SurgePostgres", .postgres, .logging, .hummingbird, .hummingbirdTesting,
        ],
        path: "Tests/LeaderboardTests", swiftSettings: swiftSettings),
    .testTarget(
        name: "NotificationsTests",
        dependencies: [
            "SurgeTestSupport", "NotificationsDomain", "NotificationsService", "SurgeRuntime", "SurgeContracts", "SurgeCalendar", "SurgeMessaging",
            "SurgePostgres", .postgres, .logging, .crypto, .httpTypes, .hummingbird, .hummingbirdTesting,
        ],
        path: "Tests/NotificationsTests", swiftSettings: swiftSettings),
    .testTarget(
        name: "AnalyticsTests",
        dependencies: [
            "SurgeTestSupport", "AnalyticsService", "AnalyticsDomain", "SurgeRuntime", "SurgeContracts", "SurgeCalendar", .postgres, .hummingbird,
            .hummingbirdTesting,
        ],
        path: "Tests/AnalyticsTests", swiftSettings: swiftSettings),
    .testTarget(
        name: "BadgesTests",
        dependencies: [
            "SurgeTestSupport", "BadgesDomain", "BadgesService", "SurgeRuntime", "SurgeContracts", "SurgeMessaging", "SurgePostgres", .postgres,
            .logging, .hummingbird, .hummingbirdTesting,
        ],
        path: "Tests/BadgesTests",
        swiftSettings: swiftSettings),
    .testTarget(name: "KafkaTests", dependencies: ["SurgeKafka", "SurgeTestSupport"], path: "Tests/KafkaTests", swiftSettings: swiftSettings),
    .testTarget(name: "PlumbingTests", dependencies: ["SurgeMessaging", "SurgePostgres", "SurgeRuntime", "SurgeTestSupport", .connectionPool, .hummingbird, .hummingbirdTesting], path: "Tests/PlumbingTests", swiftSettings: swiftSettings),
    .testTarget(
        name: "IdentityTests",
        dependencies: [
            "IdentityService", "IdentityDomain", "SurgeTestSupport", "SurgeContracts", "SurgeCalendar", "SurgePostgres", "SurgeMessaging",
            "SurgeRuntime", "SurgeAuth", .postgres, .jwt, .cryptoExtras, .hummingbird, .hummingbirdTesting,
        ],
        path: "Tests/IdentityTests", swiftSettings: swiftSettings),
    .testTarget(
        name: "SystemTests",
        dependencies: [
            "SurgeTestSupport", "SurgeContracts", "SurgeCalendar", "SurgeKafka", "SurgeMessaging", "SurgeAuth", "SurgeSimulation", .postgres, .httpClient, .hummingbird,
            .jwt,
            .crypto, .cryptoExtras, .lifecycle, "SurgeGeneratedClient", .openAPIRuntime, .openAPIAsyncHTTPClient,
        ],
        path: "Tests/SystemTests", swiftSettings: swiftSettings),
]

let package = Package(
    name: "Surge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "surge-gateway", targets: ["surge-gateway"]),
        .executable(name: "surge-identity", targets: ["surge-identity"]),
        .executable(name: "surge-challenges", targets: ["surge-challenges"]),
        .executable(name: "surge-progress", targets: ["surge-progress"]),
        .executable(name: "surge-leaderboard", targets: ["surge-leaderboard"]),
        .executable(name: "surge-badges", targets: ["surge-badges"]),
        .executable(name: "surge-notifications", targets: ["surge-notifications"]),
        .executable(name: "surge-analytics", targets: ["surge-analytics"]),
        .executable(name: "surge-template", targets: ["surge-template"]),
        .executable(name: "surge-broker", targets: ["surge-broker"]),
        .executable(name: "surge-admin", targets: ["surge-admin"]),
        .executable(name: "surge-bench", targets: ["surge-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "4.0.0"..<"6.0.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
    ],
    targets: sharedTargets + serviceTargets + toolTargets + testTargets
)
