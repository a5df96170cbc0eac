import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SurgeRuntime
import SurgeTestSupport
import Testing

@testable import GatewayService

@Suite("Gateway: the KPI dashboard's files", .tags(.unit), .kind(.unit))
struct DashboardTests {
    static func app(chartJSPath: String) -> some ApplicationProtocol {
        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: ProblemMiddleware())
        router.add(middleware: TraceMiddleware())
        DashboardController(chartJSPath: chartJSPath).addRoutes(to: router)
        return Application(router: router)
    }

    @Test("/admin/ is the page (HTML, no token needed), /admin redirects to it, /admin/chart.js is the Chart.js file")
    func files() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("surge-dashboard-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let chart = folder.appendingPathComponent("chart.min.js")
        let library = "/*! Chart.js v3.9.1 (test copy) */ window.Chart = function () {};"
        try library.write(to: chart, atomically: true, encoding: .utf8)
        try await Self.app(chartJSPath: chart.path).test(.router) { client in
            try await client.execute(uri: "/admin/", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(response.headers[HTTPField.Name("Content-Security-Policy")!]?.contains("script-src 'self'") == true)
                let page = String(buffer: response.body)
                #expect(page.contains(#"<script src="/admin/chart.js" defer></script>"#))
                #expect(page.contains(#"<script src="/admin/dashboard.js" defer></script>"#))
                #expect(page.contains(#"type="date""#))
                #expect(!page.contains("http://") && !page.contains("https://"), "no CDN: everything from the gateway")
            }
            try await client.execute(uri: "/admin", method: .get) { response in
                #expect(response.status == .movedPermanently)
                #expect(response.headers[.location] == "/admin/")
            }
            try await client.execute(uri: "/admin/dashboard.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                let script = String(buffer: response.body)
                for needle in ["/v1/auth/sign-in", "/v1/admin/kpis?", "/v1/admin/kpis.csv?", "data-kpi", "window.surgeDashboard", "sessionStorage", "borderDash"] {
                    #expect(script.contains(needle), "dashboard.js uses \(needle)")
                }
            }
            try await client.execute(uri: "/admin/chart.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                #expect(String(buffer: response.body) == library)
            }
        }
    }

    @Test("without the Chart.js file, /admin/chart.js is a 503 problem naming the package and the setting")
    func missingLibrary() async throws {
        try await Self.app(chartJSPath: "/nonexistent/chart.min.js").test(.router) { client in
            try await client.execute(uri: "/admin/chart.js", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.contentType] == "application/problem+json")
                let problem = try JSONDecoder().decode(Problem.Body.self, from: Data(String(buffer: response.body).utf8))
                #expect(problem.type == Problem.typeBase + "unavailable")
                #expect(problem.detail?.contains("libjs-chart.js") == true && problem.detail?.contains("CHART_JS_PATH") == true)
            }
            try await client.execute(uri: "/admin/", method: .get) { response in #expect(response.status == .ok) }
        }
    }

    @Test("the default path is where Debian's libjs-chart.js puts Chart.js, when it is installed here")
    func debianPackage() async throws {
        #expect(DashboardController.defaultChartJSPath == "/usr/share/javascript/chart.js/chart.min.js")
        guard FileManager.default.fileExists(atPath: DashboardController.defaultChartJSPath) else { return }
        try await Self.app(chartJSPath: DashboardController.defaultChartJSPath).test(.router) { client in
            try await client.execute(uri: "/admin/chart.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body).contains("Chart.js v3"))
            }
        }
    }
}
