import Foundation
import Hummingbird
import Logging
import Metrics
import SurgeMessaging
import SurgeRuntime

/// Progress's own settings, read once, before anything connects.
struct ProgressSettings {
    /// The largest photo accepted.
    var maxPhotoBytes: Int
    /// How many due attempts one judging transaction batch takes.
    var judgementBatchSize: Int
    /// How often due days are judged and overdue chores flagged.
    var judgementInterval: Duration

    static func from(_ reader: EnvironmentReader) throws -> ProgressSettings {
        ProgressSettings(
            maxPhotoBytes: try reader.int("PHOTO_MAX_BYTES", default: 10 << 20, range: 1024...(256 << 20)),
            judgementBatchSize: try reader.int("JUDGEMENT_BATCH_SIZE", default: 200, range: 1...10_000),
            judgementInterval: try reader.milliseconds("JUDGEMENT_INTERVAL_MS", default: 5000))
    }
}

/// The use cases progress's routes and background work run, over one storage.
struct ProgressUseCases: Sendable {
    let lifecycle: AttemptLifecycle
    let checkIns: CheckInHandler
    let pauses: PauseHandler
    let judging: DayJudging
    let attempts: AttemptQueries
    let points: PointsQueries
    let photos: PhotoGallery
    let chores: HouseholdChores
    let choreScheduling: ChoreScheduling

    init(storage: ProgressStorage, clock: ServiceClock, logger: Logger) {
        lifecycle = AttemptLifecycle(storage: storage, clock: clock)
        checkIns = CheckInHandler(storage: storage, clock: clock)
        pauses = PauseHandler(storage: storage, clock: clock)
        judging = DayJudging(storage: storage, clock: clock, logger: logger)
        attempts = AttemptQueries(storage: storage, clock: clock)
        points = PointsQueries(storage: storage, clock: clock)
        photos = PhotoGallery(storage: storage)
        chores = HouseholdChores(storage: storage, clock: clock)
        choreScheduling = ChoreScheduling(storage: storage, clock: clock)
    }
}

/// `buildApplication` only wires, with no I/O: settings are read first, the migrations run as the application's first
/// lifecycle step, and `addRoutes` builds the routes so tests can build them without I/O.
public enum ProgressService {
    public static var api: [APIOperation] { ProgressAPI.all }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let progress = try ProgressSettings.from(settings.reader)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [ProgressMigrations.set])
        let storage = ProgressStorage(client: infrastructure.database, outbox: infrastructure.outbox, logger: infrastructure.logger)
        let useCases = ProgressUseCases(storage: storage, clock: infrastructure.clock, logger: infrastructure.logger)
        var routes = ConsumerRoutes { storage.stores(on: $0, logger: $1) }
        ProgressEvents.register(in: &routes, judging: useCases.judging, chores: useCases.choreScheduling)
        let consumer = try infrastructure.consumer(routes.handlers)
        let router = infrastructure.makeRouter(consumers: [consumer])
        addRoutes(to: router, useCases: useCases, maxPhotoBytes: progress.maxPhotoBytes)
        let judgementRounds = Counter(label: "surge_judgement_rounds_total")
        CheckInHandler.startMetricsAtZero()
        let judgement = PeriodicService("day-judgement", every: progress.judgementInterval, logger: infrastructure.logger) {
            try await useCases.judging.judgeAllDue(batchSize: progress.judgementBatchSize)
            try await useCases.choreScheduling.remindAllDueSoon()
            try await useCases.choreScheduling.flagAllOverdue()
            judgementRounds.increment()
        }
        return infrastructure.makeApplication(router: router, consumers: [consumer], services: [judgement])
    }

    static func addRoutes(to router: Router<SurgeRequestContext>, useCases: ProgressUseCases, maxPhotoBytes: Int) {
        AttemptsController(lifecycle: useCases.lifecycle, queries: useCases.attempts, points: useCases.points).addRoutes(to: router)
        PausesController(pauses: useCases.pauses).addRoutes(to: router)
        CheckInsController(checkIns: useCases.checkIns, photos: useCases.photos, maxPhotoBytes: maxPhotoBytes).addRoutes(to: router)
        ChoresController(chores: useCases.chores).addRoutes(to: router)
    }
}
