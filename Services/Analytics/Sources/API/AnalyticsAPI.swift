import SurgeContracts
import SurgeRuntime

/// The KPIs, for admins only: the gateway answers 404 to everyone else, as if the routes did not exist.
enum AnalyticsAPI {
    static let range: [APIOperation.QueryParameter] = [
        .init("from", "First local day of the range (default: 27 days before `to`).", schema: .string(format: "date")),
        .init("to", "Last local day of the range (default: today, UTC).", schema: .string(format: "date")),
    ]

    static let kpis = APIOperation(
        .get, "/v1/admin/kpis", id: "getKPIs", service: .analytics, summary: "The product KPIs per day and per signup-cohort week, with their targets (admins only).",
        access: .admin, query: range, response: KPIController.ReportResponse.self, errors: [.notFound])

    static let kpisCSV = APIOperation(
        .get, "/v1/admin/kpis.csv", id: "getKPIsCSV", service: .analytics,
        summary: "The same KPIs as CSV, one row per period and KPI: scope,period,kpi,value,numerator,denominator,target (admins only).",
        access: .admin, query: range, responseMediaTypes: ["text/csv"], errors: [.notFound])

    static let all = [kpis, kpisCSV]
}
