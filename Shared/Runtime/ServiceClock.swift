import Foundation
import Hummingbird
import SurgeContracts
import Synchronization

/// The service's idea of now. In production it is the system clock. In development and tests it can be simulated
/// (`SIMULATED_CLOCK=true`): `PUT /internal/clock {"now": "..."}` moves it forward, so a 75-day challenge runs in
/// seconds. It refuses to go back (days judged, reminders sent and events stamped would be undone out of order),
/// unless the body says `"rewind": true`, which only the test harness sends: each test's stack starts its timeline
/// wherever the test needs it.
public final class ServiceClock: Sendable {
    private let offset = Mutex<TimeInterval?>(nil)
    public let isSimulated: Bool

    public init(simulated: Bool) {
        isSimulated = simulated
    }

    public static let system = ServiceClock(simulated: false)

    /// Reads `SIMULATED_CLOCK`; refuses it in production.
    public static func from(_ settings: ServiceSettings) throws -> ServiceClock {
        let simulated = try settings.reader.bool("SIMULATED_CLOCK", default: false)
        if simulated && settings.environment == .production {
            throw ConfigurationError(variable: "SIMULATED_CLOCK", problem: "must not be enabled in production")
        }
        return ServiceClock(simulated: simulated)
    }

    public func now() -> Date {
        Date().addingTimeInterval(offset.withLock { $0 } ?? 0)
    }

    /// Moves simulated time to `instant` (it then advances in real time from there).
    public func set(_ instant: Date) {
        precondition(isSimulated, "only a simulated clock can be moved")
        offset.withLock { $0 = instant.timeIntervalSinceNow }
    }

    struct ClockMove: Codable {
        var now: Date
        var rewind: Bool?
    }

    struct ClockBody: Codable {
        var now: Date

        /// With milliseconds, unlike the public API's whole seconds: `surge-admin clock advance` adds to this instant.
        var response: Response {
            get throws {
                Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(bytes: try SurgeJSON.encode(self))))
            }
        }
    }

    /// `GET`/`PUT /internal/clock`, only when simulated.
    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        guard isSimulated else { return }
        router.get("/internal/clock") { _, _ in try ClockBody(now: self.now()).response }
        router.put("/internal/clock") { request, context -> Response in
            let move = try await request.decode(as: ClockMove.self, context: context)
            let current = self.now()
            if move.now < current, move.rewind != true {
                throw Problem(
                    slug: "clock-backwards", title: "The clock only moves forward", status: .conflict,
                    detail: "The simulated clock is at \(Timestamp.format(current)) and only moves forward: \(Timestamp.format(move.now)) is earlier.")
            }
            self.set(move.now)
            return try ClockBody(now: self.now()).response
        }
    }
}
