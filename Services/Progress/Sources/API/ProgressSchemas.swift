import SurgeContracts

// What the OpenAPI document says about progress's response fields beyond their Swift types: the lists string fields
// take their values from.

extension AttemptStatus: JSONSchemaEnum {}

/// A chore occurrence's state, as the list filter and each occurrence name it.
enum ChoreOccurrenceStatus: String, JSONSchemaEnum {
    case pending, completed
}

extension AttemptView: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "status": .values(AttemptStatus.self)
    ]
}

extension CalendarDay: JSONSchemaRefined {
    /// A judged day's outcome, or where an unjudged day stands.
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "status": .init(
            schema: .named(
                "CalendarDayStatus", .enumeration(["before"] + PeriodOutcome.schemaCases + ["open", "future", "after"], open: true)))
    ]
}

extension ChoreOccurrence: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = ["status": .values(ChoreOccurrenceStatus.self)]
}

extension PhotoView: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "contentType": .init(schema: .named("PhotoMediaType", .enumeration(PhotoRules.contentTypes, open: true)))
    ]
}
