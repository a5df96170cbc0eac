import Foundation
import Logging
import SurgeKafka
import SurgeTestSupport
import Synchronization
import Testing

/// Closes producers and consumers in the middle of heavy concurrent use, several times over: nothing may crash (a
/// librdkafka call on a destroyed handle would), nothing may hang (every wait has a deadline), every send ends with a
/// delivery report or an error, and every call after the close throws `KafkaError.closed`.
@Suite("Closing Kafka clients while they are in heavy use", .tags(.integration), .kind(.integration, needsDatabase: false))
struct KafkaShutdownTests {
    let logger = Logger.test("kafka-shutdown-tests")
    static let topic = "surge.progress.events"

    @Test("a producer closed during concurrent sends, flushes and connectivity checks ends every send and then refuses calls")
    func producerClosedUnderLoad() async throws {
        let kafka = try TestKafka()
        for round in 0..<6 {
            // Odd rounds take the broker down just before closing, so that many records are still waiting for a report.
            let brokerDownAtClose = round % 2 == 1
            let summary = try await withDeadline("producer round \(round)", .seconds(60)) { [logger] in
                try await Self.producerRound(kafka: kafka, round: round, brokerDownAtClose: brokerDownAtClose, logger: logger)
            }
            kafka.cluster.setBrokersAvailable(true)
            logger.info("producer round \(round): \(summary)")
        }
    }

    @Test("a consumer closed while it polls and while connectivity checks run stops cleanly and then refuses calls")
    func consumerClosedUnderLoad() async throws {
        let kafka = try TestKafka()
        let producer = try KafkaProducer(configuration: kafka.configuration(clientID: "seed"), logger: logger)
        let seeded = await producer.send((0..<400).map { KafkaRecord(topic: Self.topic, key: Data("k\($0 % 13)".utf8), value: Data("\($0)".utf8)) })
        #expect(seeded.allSatisfy { (try? $0.get()) != nil })
        await producer.close()

        // Close while joining the group, once partitions are assigned, and in the middle of consuming.
        let closePoints: [ConsumerClosePoint] = [.whileJoining, .afterAssignment, .whileConsuming, .whileJoining, .whileConsuming]
        for (round, closePoint) in closePoints.enumerated() {
            try await withDeadline("consumer round \(round) (\(closePoint))", .seconds(60)) { [logger] in
                try await Self.consumerRound(kafka: kafka, round: round, closePoint: closePoint, logger: logger)
            }
        }
    }

    // MARK: - Producer

    enum SendOutcome: Sendable {
        case delivered(KafkaDeliveryReport)
        case failed(KafkaError)
        case unexpected(String)
    }

    struct ProducerRoundSummary: Sendable, CustomStringConvertible {
        var attempts: Int
        var delivered: Int
        var closedFailures: Int
        var description: String { "\(attempts) sends, \(delivered) delivered, \(closedFailures) failed as closed" }
    }

    static func producerRound(kafka: TestKafka, round: Int, brokerDownAtClose: Bool, logger: Logger) async throws -> ProducerRoundSummary {
        let producer = try KafkaProducer(configuration: kafka.configuration(clientID: "hammer-\(round)"), logger: logger)
        let attempts = LockedValue(0)
        let outcomes = LockedValue<[SendOutcome]>([])
        let delivered = LockedValue(0)
        /// Errors other than `closed` from flush and connectivity checks (timeouts while the broker is down are fine).
        let otherCallErrors = LockedValue<[String]>([])
        let workersEndedClosed = LockedValue(0)

        @Sendable func record(_ outcome: SendOutcome) {
            outcomes.withLock { $0.append(outcome) }
            if case .delivered = outcome { delivered.withLock { $0 += 1 } }
        }
        @Sendable func makeRecord(_ worker: Int, _ index: Int) -> KafkaRecord {
            KafkaRecord(topic: topic, key: Data("w\(worker)-\(index % 5)".utf8), value: Data("round \(round) worker \(worker) #\(index)".utf8))
        }

        let closeAfter = 40 + round * 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Single sends: each waits for its own report.
            for worker in 0..<12 {
                group.addTask {
                    for index in 0... where !Task.isCancelled {
                        attempts.withLock { $0 += 1 }
                        do {
                            record(.delivered(try await producer.send(makeRecord(worker, index))))
                        } catch let error as KafkaError {
                            record(.failed(error))
                            if error == .closed { break }
                        } catch {
                            record(.unexpected("\(error)"))
                            break
                        }
                    }
                    workersEndedClosed.withLock { $0 += 1 }
                }
            }
            // Batches: many records enqueued before any report is awaited.
            for worker in 12..<16 {
                group.addTask {
                    for batch in 0... where !Task.isCancelled {
                        let records = (0..<25).map { makeRecord(worker, batch * 25 + $0) }
                        attempts.withLock { $0 += records.count }
                        let results = await producer.send(records)
                        var sawClosed = false
                        for result in results {
                            switch result {
                            case .success(let report): record(.delivered(report))
                            case .failure(let error as KafkaError):
                                record(.failed(error))
                                if error == .closed { sawClosed = true }
                            case .failure(let error): record(.unexpected("\(error)"))
                            }
                        }
                        if sawClosed { break }
                    }
                    workersEndedClosed.withLock { $0 += 1 }
                }
            }
            // Flushes (blocking librdkafka calls run off the pool) racing the close.
            for _ in 0..<3 {
                group.addTask {
                    while !Task.isCancelled {
                        do {
                            try await producer.flush(timeout: .milliseconds(200))
                        } catch KafkaError.closed {
                            break
                        } catch {
                            // Under continuous load the queue may never drain within the timeout: that is fine.
                            if !isTimeout(error) { otherCallErrors.withLock { $0.append("flush: \(error)") } }
                        }
                        // Paces the loop when nothing is in flight (a flush then returns at once).
                        try? await Task.sleep(for: .milliseconds(2))
                    }
                    workersEndedClosed.withLock { $0 += 1 }
                }
            }
            // Connectivity checks (metadata requests and the fatal-error check).
            for _ in 0..<3 {
                group.addTask {
                    while !Task.isCancelled {
                        do {
                            try await producer.checkConnectivity(timeout: .seconds(1))
                        } catch KafkaError.closed {
                            break
                        } catch {
                            if !isTimeout(error) { otherCallErrors.withLock { $0.append("checkConnectivity: \(error)") } }
                        }
                    }
                    workersEndedClosed.withLock { $0 += 1 }
                }
            }
            // Two closers at once, in the middle of it all.
            try await waitUntil("\(closeAfter) records delivered before closing", timeout: .seconds(30), every: .milliseconds(5)) {
                delivered.value >= closeAfter
            }
            if brokerDownAtClose { kafka.cluster.setBrokersAvailable(false) }
            for _ in 0..<2 { group.addTask { await producer.close() } }
            try await group.waitForAll()
        }

        // Every send ended, with a delivery report or an error; the only error is `closed`.
        let all = outcomes.value
        #expect(all.count == attempts.value)
        #expect(workersEndedClosed.value == 22)
        let reports = all.compactMap { if case .delivered(let report) = $0 { report } else { nil } }
        let failures = all.compactMap { if case .failed(let error) = $0 { error } else { nil } }
        let unexpected = all.compactMap { if case .unexpected(let text) = $0 { text } else { nil } }
        #expect(reports.count >= closeAfter)
        #expect(reports.allSatisfy { $0.topic == topic && $0.offset >= 0 })
        #expect(Set(reports.map { "\($0.partition)/\($0.offset)" }).count == reports.count, "each report names its own offset")
        #expect(failures.count >= 16, "every sending worker stopped on a closed error")
        #expect(failures.allSatisfy { $0 == .closed }, "failures: \(Set(failures.map(\.description)))")
        #expect(unexpected.isEmpty, "\(unexpected.prefix(5))")
        if !brokerDownAtClose {
            #expect(otherCallErrors.value.isEmpty, "\(otherCallErrors.value.prefix(5))")
        }

        // Calls after the close fail at once with the closed error, and closing again is harmless.
        let late = KafkaRecord(topic: topic, key: nil, value: Data("late".utf8))
        await #expect(throws: KafkaError.closed) { try await producer.send(late) }
        let lateBatch = await producer.send([late, late])
        #expect(lateBatch.allSatisfy { result in if case .failure(let error as KafkaError) = result { error == .closed } else { false } })
        await #expect(throws: KafkaError.closed) { try await producer.flush(timeout: .seconds(1)) }
        await #expect(throws: KafkaError.closed) { try await producer.checkConnectivity() }
        await producer.close()
        return ProducerRoundSummary(
            attempts: attempts.value, delivered: reports.count, closedFailures: failures.count)
    }

    // MARK: - Consumer

    enum ConsumerClosePoint: Sendable, CustomStringConvertible {
        case whileJoining, afterAssignment, whileConsuming
        var description: String {
            switch self {
            case .whileJoining: "while joining"
            case .afterAssignment: "after assignment"
            case .whileConsuming: "while consuming"
            }
        }
    }

    static func consumerRound(kafka: TestKafka, round: Int, closePoint: ConsumerClosePoint, logger: Logger) async throws {
        let consumed = ReceivedMessages()
        let consumer = try KafkaConsumer(
            configuration: kafka.configuration(clientID: "hammer-consumer-\(round)"), groupID: "hammer-\(round)", topics: [topic],
            maxBatchSize: 16, logger: logger
        ) { message in
            consumed.append(message)
            // Slow enough that the close lands in the middle of the topic.
            try? await Task.sleep(for: .milliseconds(2))
            return .handled
        }
        let checksSucceeded = LockedValue(0)
        let otherCheckErrors = LockedValue<[String]>([])
        let checkersEndedClosed = LockedValue(0)

        let running = Task { try await consumer.run() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    while !Task.isCancelled {
                        do {
                            try await consumer.checkConnectivity(timeout: .seconds(1))
                            checksSucceeded.withLock { $0 += 1 }
                        } catch KafkaError.closed {
                            break
                        } catch {
                            if !isTimeout(error) { otherCheckErrors.withLock { $0.append("\(error)") } }
                        }
                    }
                    checkersEndedClosed.withLock { $0 += 1 }
                }
            }
            switch closePoint {
            case .whileJoining:
                try await waitUntil("a connectivity check passed", every: .milliseconds(5)) { checksSucceeded.value > 0 }
                #expect(consumed.count == 0)
            case .afterAssignment:
                try await waitUntil("partitions assigned", timeout: .seconds(30), every: .milliseconds(5)) { consumer.assignedPartitionCount > 0 }
            case .whileConsuming:
                try await waitUntil("records consumed", timeout: .seconds(30), every: .milliseconds(5)) { consumed.count >= 40 }
            }
            for _ in 0..<2 { group.addTask { await consumer.close() } }
            try await group.waitForAll()
        }

        // The poll loop ended without an error, every checker stopped on the closed error.
        try await running.value
        #expect(checkersEndedClosed.value == 6)
        #expect(otherCheckErrors.value.isEmpty, "\(otherCheckErrors.value.prefix(5))")
        if closePoint == .whileConsuming { #expect(consumed.count < 400, "closed before the topic was drained") }

        // Calls after the close fail at once with the closed error, and closing again is harmless.
        await #expect(throws: KafkaError.closed) { try await consumer.checkConnectivity() }
        await #expect(throws: KafkaError.closed) { try await consumer.run() }
        await consumer.close()
        #expect(consumer.assignedPartitionCount == 0)
    }
}

/// librdkafka's local timeout (`RD_KAFKA_RESP_ERR__TIMED_OUT`): a flush or metadata request that ran out of time.
func isTimeout(_ error: any Error) -> Bool {
    if case .broker(let code, _) = error as? KafkaError { return code == -185 }
    return false
}

// MARK: - Deadlines

struct DeadlineExceeded: Error, CustomStringConvertible {
    let what: String
    let timeout: Duration
    var description: String { "\(what) did not finish within \(timeout)" }
}

/// Runs `body` and fails with `DeadlineExceeded` if it has not finished by the deadline. Unlike a task group, it does
/// not wait for a hung `body` (it cancels it and returns), so a hang fails the test instead of stalling the run.
func withDeadline<Value: Sendable>(
    _ what: String, _ timeout: Duration, _ body: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let outcome = FirstOutcome<Value>()
    let work = Task {
        do { outcome.resolve(.success(try await body())) } catch { outcome.resolve(.failure(error)) }
    }
    let timer = Task {
        do { try await Task.sleep(for: timeout) } catch { return }
        work.cancel()
        outcome.resolve(.failure(DeadlineExceeded(what: what, timeout: timeout)))
    }
    defer { timer.cancel() }
    return try await outcome.value()
}

/// The first result handed to it, delivered to one waiter whether it arrives before or after the waiter.
final class FirstOutcome<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiter: CheckedContinuation<Value, any Error>?
    }

    private let state = Mutex(State())

    func resolve(_ result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let result = state.withLock { state -> Result<Value, any Error>? in
                if state.result == nil { state.waiter = continuation }
                return state.result
            }
            if let result { continuation.resume(with: result) }
        }
    }
}
