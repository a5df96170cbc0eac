import ProgressDomain
import SurgeContracts

// What the OpenAPI document says about progress's request and response fields beyond their Swift types: the lists
// string fields take their values from, and the limits check-ins are validated against (`CheckIns`).

extension AttemptStatus: JSONSchemaEnum {}

/// A chore occurrence's state, as the list filter and each occurrence name it.
enum ChoreOccurrenceStatus: String, JSONSchemaEnum {
    case pending, completed
}

extension AttemptView: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "status": .values(AttemptStatus.self),
        "timeZone": .init(example: "Europe/Rome"),
    ]
}

extension CalendarDay: JSONSchemaRefined {
    /// A judged day's outcome, or where an unjudged day stands.
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "status": .init(
            schema: .named(
                "CalendarDayStatus", .enumeration(["before"] + PeriodOutcome.schemaCases + ["open", "closed", "future", "after"], open: true)))
    ]
}

extension ChoreOccurrence: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = ["status": .values(ChoreOccurrenceStatus.self)]
}

extension PhotoView: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "contentType": .init(schema: .named("PhotoMediaType", .enumeration(PhotoRules.contentTypes, open: true))),
        "taskID": .init(example: "progress-photo"),
    ]
}

extension CheckInsController.LogRequest: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "quantity": .init(exclusiveMinimum: 0, maximum: 1_000_000, example: 20),
        "series": .range(1...10_000),
    ]
}

extension AttemptsController.CalendarResponse: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = [
        "month": .init(pattern: ProgressAPI.monthPattern, example: "2026-03")
    ]
}

extension PausesController.PauseRequestBody: JSONSchemaRefined {
    static let fieldRefinements: [String: JSONSchema.Refinement] = ["days": .range(1...PauseRequest.maximumDays)]
}
