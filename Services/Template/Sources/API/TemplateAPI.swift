import SurgeRuntime

/// The operations the template declares. A deployed service's operations are listed in `PublicAPICatalogue` and
/// routed by the gateway; the template is never deployed, so its router test and system test call it directly.
enum TemplateAPI {
    static let dailyTally = APIOperation(
        .get, "/v1/tallies/{date}", id: "getDailyTally", service: .template,
        summary: "How many check-ins the caller made on one of their local days.", response: TallyController.TallyResponse.self,
        errors: [.notFound])

    static let all = [dailyTally]
}
