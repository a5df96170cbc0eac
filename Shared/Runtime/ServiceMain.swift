import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SurgeContracts

/// What every `surge-<name>` executable's `main.swift` calls: settings from the environment, the service's
/// `buildApplication`, then the application under a signal-aware service group whose graceful shutdown is bounded.
///
/// A configuration error prints one line naming the variable and exits with 78 (`EX_CONFIG`), without a backtrace.
/// On SIGTERM the application shuts down gracefully; whatever is still running after `SHUTDOWN_TIMEOUT_SECONDS` is
/// cancelled, and the process exits at the deadline regardless, so an orchestrator never has to SIGKILL it.
public enum ServiceMain {
    public static let configurationErrorStatus: Int32 = 78

    public static func run<App: ApplicationProtocol>(_ surgeService: SurgeService, build: (ServiceSettings) async throws -> App) async -> Never {
        let service = surgeService.rawValue
        let settings: ServiceSettings
        let app: App
        do {
            settings = try ServiceSettings.fromEnvironment(service: service, defaultPort: surgeService.entry.port)
            try await checkPortIsFree(host: settings.httpHost, port: settings.httpPort)
            app = try await build(settings)
        } catch let error as ConfigurationError {
            fail(printing: "surge-\(service): \(error.description)", status: configurationErrorStatus)
        } catch {
            fail(printing: "surge-\(service): could not start: \(error)", status: 1)
        }
        var logger = Logger(label: "surge-\(service)")
        logger.logLevel = settings.logLevel
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: app),
                // Last in the list, so the first to hear of the shutdown: it arms the deadline before anything stops.
                .init(service: ShutdownDeadline(timeout: settings.shutdownTimeout, logger: logger)),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        configuration.maximumGracefulShutdownDuration = settings.shutdownTimeout * 0.8
        do {
            try await ServiceGroup(configuration: configuration).run()
            Foundation.exit(0)
        } catch let error as ConfigurationError {
            // A setting found wrong only once used (the database refusing DATABASE_URL's login).
            fail(printing: "surge-\(service): \(error.description)", status: configurationErrorStatus)
        } catch {
            fail(printing: "surge-\(service): stopped: \(error)", status: 1)
        }
    }

    /// A one-off task of the service (`surge-<name> <command>`): settings from the environment, then `work`, whose
    /// report is printed; exits 0, or 1 printing the error (78 for a configuration error).
    public static func runCommand(_ surgeService: SurgeService, _ work: (ServiceSettings) async throws -> String) async -> Never {
        let service = surgeService.rawValue
        do {
            let settings = try ServiceSettings.fromEnvironment(service: service, defaultPort: surgeService.entry.port)
            print(try await work(settings))
            Foundation.exit(0)
        } catch let error as ConfigurationError {
            fail(printing: "surge-\(service): \(error.description)", status: configurationErrorStatus)
        } catch {
            fail(printing: "surge-\(service): failed: \(error)", status: 1)
        }
    }

    /// Binds the HTTP port for a moment before anything else starts, so a port in use is said at once, naming the
    /// setting, instead of after the migrations and the consumer's first join (the server binds only then).
    static func checkPortIsFree(host: String, port: Int) async throws {
        guard port != 0 else { return }
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port).get()
            try await channel.close()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw ConfigurationError(variable: "HTTP_PORT", problem: "\(port) is in use on \(host): another process listens there")
        }
    }

    private static func fail(printing line: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data((line + "\n").utf8))
        Foundation.exit(status)
    }
}

/// Ends the process once a graceful shutdown has taken `timeout`, whatever is still running.
struct ShutdownDeadline: Service {
    let timeout: Duration
    let logger: Logger

    func run() async throws {
        try? await gracefulShutdown()
        let (timeout, logger) = (timeout, logger)
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: seconds)
            logger.warning("Graceful shutdown took longer than allowed; exiting", metadata: ["timeoutSeconds": "\(seconds)"])
            exit(0)
        }
    }
}
