import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

@Suite("Event catalogue", .tags(.unit), .kind(.unit))
struct EventCatalogueTests {
    static let docs = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/events")

    @Test("docs/events matches the event types in code (run `make contracts` after changing a payload)")
    func documentationIsCurrent() throws {
        let generated = try EventCatalogue.documentation()
        for file in generated {
            let onDisk = try? Data(contentsOf: Self.docs.appendingPathComponent(file.path))
            #expect(onDisk == file.contents, "docs/events/\(file.path) is out of date: run `make contracts`")
        }
        let schemaFiles = try FileManager.default.contentsOfDirectory(atPath: Self.docs.appendingPathComponent("schemas").path)
        let expected = Set(generated.map(\.path).filter { $0.hasPrefix("schemas/") }.map { String($0.dropFirst("schemas/".count)) })
        #expect(Set(schemaFiles) == expected, "docs/events/schemas has files for event types that no longer exist")
    }

    @Test("every event type is unique, versioned and named after the service that publishes its topic")
    func typesAreVersionedAndOwned() {
        let types = EventCatalogue.all.map { $0.descriptor.type }
        #expect(Set(types).count == types.count)
        for payload in EventCatalogue.all {
            let descriptor = payload.descriptor
            #expect(descriptor.type.hasPrefix("surge.\(descriptor.topic.producer)."), "\(descriptor.type)")
            #expect(descriptor.type.range(of: #"\.v[0-9]+$"#, options: .regularExpression) != nil, "\(descriptor.type) has no version")
            #expect(Topic.all.contains(descriptor.topic))
        }
    }

    @Test("every event type's schema can be derived")
    func schemasDerive() throws {
        for payload in EventCatalogue.all {
            guard case .object(let properties) = try JSONSchema.derived(from: payload) else {
                Issue.record("\(payload.descriptor.type) is not an object")
                continue
            }
            #expect(!properties.isEmpty)
        }
    }

    @Test("every event type says when it is emitted")
    func emissionIsStated() {
        for payload in EventCatalogue.all {
            #expect(!payload.descriptor.emitted.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(payload.descriptor.type)")
        }
    }

    @Test("every example is its producer's, validates against its type's schema and reads back whole from the record")
    func examplesAreValid() throws {
        var ids: Set<UUID> = []
        for payload in EventCatalogue.all { ids.insert(try Self.checkExample(payload)) }
        #expect(ids.count == EventCatalogue.all.count, "two examples share a ce_id")
    }

    /// Checks one type's example; returns its event id.
    static func checkExample<Payload: EventPayload>(_ payload: Payload.Type) throws -> UUID {
        let event = Payload.example
        let descriptor = Payload.descriptor
        #expect(event.source == "/surge/\(descriptor.topic.producer)", "\(descriptor.type)")
        #expect(Timestamp.format(event.time).hasPrefix("2026-"), "\(descriptor.type)")
        let record = try EventRecord(event)
        let schema = try JSONDecoder().decode(JSONValue.self, from: EventCatalogue.schemaDocument(for: payload))
        let violations = SchemaConformance.violations(of: try JSONDecoder().decode(JSONValue.self, from: record.data), against: schema)
        #expect(violations.isEmpty, "\(descriptor.type): \(violations)")
        let received = try EventRecord(kafkaKey: record.kafkaKey, value: record.data, headers: record.kafkaHeaders)
        #expect(try received.decode(as: Payload.self) == event, "\(descriptor.type)")
        return event.id
    }
}
