import Hummingbird
import NIOCore
import SurgeRuntime

/// `GET /problems/<type>`: a short page per problem type, so that a problem document's `type` is a link that works
/// once `PROBLEM_TYPE_BASE_URL` names the gateway's `/problems/` on the public host. What it says is what the OpenAPI
/// document says of the type (`ProblemType.meaning`); `http-<status>` stands for any other HTTP error.
struct ProblemPagesController {
    static let path = "/problems/{type}"

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.get("/problems/:type") { _, context in
            let slug = try context.parameters.require("type")
            guard let page = Self.page(slug) else { throw Problem.notFound() }
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "public, max-age=86400"],
                body: .init(byteBuffer: ByteBuffer(string: page)))
        }
    }

    static func page(_ slug: String) -> String? {
        let type: ProblemType
        if let known = ProblemType.all.first(where: { $0.slug == slug }) {
            type = known
        } else if slug.hasPrefix("http-"), let code = Int(slug.dropFirst(5)), (400...599).contains(code) {
            type = ProblemType(slug, .init(code: code), "Any other HTTP error with this status; `detail` says what happened.")
        } else {
            return nil
        }
        let title = type.slug.prefix(1).uppercased() + type.slug.dropFirst().replacingOccurrences(of: "-", with: " ")
        return """
            <!doctype html>
            <html lang="en">
            <head><meta charset="utf-8"><title>\(escaped(title)): a Surge API problem</title></head>
            <body>
            <h1>\(escaped(title))</h1>
            <p>HTTP \(type.status.code) \(escaped(type.status.reasonPhrase)), <code>type</code> ending in <code>\(escaped(type.slug))</code>.</p>
            <p>\(codeSpans(escaped(type.meaning)))</p>
            <p>The operations that can answer it list it under <code>x-problem-types</code> in <a href="/openapi.json">the OpenAPI document</a>.</p>
            </body>
            </html>

            """
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// The meaning's `code` spans, as HTML.
    private static func codeSpans(_ text: String) -> String {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .map { index, part in index % 2 == 1 ? "<code>\(part)</code>" : String(part) }.joined()
    }
}
