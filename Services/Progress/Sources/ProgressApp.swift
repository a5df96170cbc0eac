import Hummingbird
import Metrics
import SurgeMessaging
import SurgeRuntime

public enum ProgressService {
    public static var api: [APIOperation] { ProgressAPI.all }

    public static func buildApplication(_ settings: ServiceSettings) async throws -> some ApplicationProtocol {
        let reader = settings.reader
        let maxPhotoBytes = try reader.int("PHOTO_MAX_BYTES", default: 10 << 20, range: 1024...(256 << 20))
        let judgementBatch = try reader.int("JUDGEMENT_BATCH_SIZE", default: 200, range: 1...10_000)
        let judgementInterval = try reader.milliseconds("JUDGEMENT_INTERVAL_MS", default: 5000)
        let infrastructure = try ServiceInfrastructure(settings, migrations: [ProgressMigrations.set])
        let repository = ProgressRepository(
            client: infrastructure.database, outbox: infrastructure.outbox, clock: infrastructure.clock, logger: infrastructure.logger)
        let chores = ChoreStore(client: infrastructure.database, outbox: infrastructure.outbox, clock: infrastructure.clock, logger: infrastructure.logger)
        var handlers = EventHandlers()
        ProgressEventHandlers(repository: repository, chores: chores).register(in: &handlers)
        let consumer = try infrastructure.consumer(handlers)

        let router = infrastructure.makeRouter(consumers: [consumer])
        AttemptsController(repository: repository).addRoutes(to: router)
        PausesController(repository: repository).addRoutes(to: router)
        CheckInsController(
            repository: repository, maxPhotoBytes: maxPhotoBytes
        ).addRoutes(to: router)
        ChoresController(chores: chores).addRoutes(to: router)
        router.get("/internal/export") { _, context in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(bytes: try await repository.export(userID: try context.caller()))))
        }

        let judgementRounds = Counter(label: "surge_judgement_rounds_total")
        let judgement = PeriodicService(
            "day-judgement", every: judgementInterval, logger: infrastructure.logger
        ) {
            while try await repository.judgeDue(limit: judgementBatch) == judgementBatch {}
            while try await chores.flagOverdue() == 500 {}
            judgementRounds.increment()
        }
        return infrastructure.makeApplication(router: router, consumers: [consumer], services: [judgement])
    }
}
