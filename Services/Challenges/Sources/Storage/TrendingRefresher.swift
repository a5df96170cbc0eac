import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import SurgeRuntime

/// Lets days older than the trending window drop out of the scores: writes refresh the challenge they touch, but a
/// challenge nobody touches would keep last week's score without this. Runs every `interval` (default 10 minutes;
/// `TRENDING_REFRESH_SECONDS`), on every replica (the update is idempotent).
struct TrendingRefresher: Service {
    let client: PostgresClient
    let clock: ServiceClock
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let changed = try await Trending.refreshAll(today: Trending.day(at: clock.now()), client: client, logger: logger)
                    if changed > 0 { logger.debug("Refreshed trending scores", metadata: ["changed": "\(changed)"]) }
                } catch {
                    logger.warning("Refreshing trending scores failed; trying again later", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
