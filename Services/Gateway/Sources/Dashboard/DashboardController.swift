import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOPosix
import SurgeRuntime

/// The KPI dashboard's static files: the page (`/admin/`), its script and Chart.js from Debian's `libjs-chart.js`
/// (`CHART_JS_PATH`). They hold no data, so they need no token; the page signs in and reads `/v1/admin/kpis` with the
/// access token, where the gateway answers only admins. No CDN and no build step: the page and its script are the
/// strings in `DashboardPage`.
struct DashboardController: Sendable {
    /// Debian's `libjs-chart.js` (3.9) installs its UMD build here (`dpkg -L libjs-chart.js`).
    static let defaultChartJSPath = "/usr/share/javascript/chart.js/chart.min.js"
    static let paths = ["/admin", "/admin/", "/admin/dashboard.js", "/admin/chart.js"]

    let chartJSPath: String

    /// Scripts only from the gateway itself; data only from the gateway's API; the page in no frame.
    static let securityHeaders: HTTPFields = [
        HTTPField.Name("Content-Security-Policy")!:
            "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; "
            + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        .cacheControl: "no-cache",
    ]

    func addRoutes(to router: Router<some RequestContext>) {
        // The router does not tell `/admin` from `/admin/`: the handler does, so the page always has one address.
        router.get("/admin/") { request, _ in
            guard request.uri.path.hasSuffix("/") else {
                return Response(status: .movedPermanently, headers: [.location: "/admin/", .contentLength: "0"])
            }
            return Self.file(DashboardPage.html, contentType: "text/html; charset=utf-8")
        }
        router.get("/admin/dashboard.js") { _, _ in
            Self.file(DashboardPage.script, contentType: "text/javascript; charset=utf-8")
        }
        router.get("/admin/chart.js") { _, _ in
            try await chartJS()
        }
    }

    static func file(_ text: String, contentType: String) -> Response {
        var headers = securityHeaders
        headers[.contentType] = contentType
        let buffer = ByteBuffer(string: text)
        headers[.contentLength] = String(buffer.readableBytes)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: buffer))
    }

    /// Read on every request (off the cooperative pool): installing the package later needs no restart.
    func chartJS() async throws -> Response {
        let path = chartJSPath
        let data = try await NIOThreadPool.singleton.runIfActive { FileManager.default.contents(atPath: path) }
        guard let data else {
            // The documented `unavailable` problem, not a type of its own: this is an operator's matter, not a client's.
            throw Problem.unavailable(
                "Chart.js is not installed at \(path) on this gateway: install Debian's libjs-chart.js or set CHART_JS_PATH.", retryAfter: 60)
        }
        var headers = Self.securityHeaders
        headers[.contentType] = "text/javascript; charset=utf-8"
        headers[.contentLength] = String(data.count)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
