import Foundation
import SurgeContracts
import SurgeTestSupport
import Testing

/// Everything outside the services' folders that names services must agree with `SurgeService`, the one registry.
/// When one of these fails after adding a service, the message says which file to extend and how.
@Suite("Service registry", .tags(.unit), .kind(.unit))
struct RegistryConsistencyTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static let services = SurgeService.deployed

    @Test("ports and topics are unique; every topic is produced by the service that owns it")
    func registryIsWellFormed() {
        let ports = Self.services.map(\.entry.port)
        #expect(Set(ports).count == ports.count)
        for service in Self.services {
            if let topic = service.entry.topic { #expect(topic.producer == service.rawValue) }
        }
        #expect(Topic.all.map(\.name) == Self.services.compactMap(\.entry.topic?.name))
        #expect(SurgeService.allCases.filter { !$0.entry.deployed } == [.template])
        #expect(Set(Topic.deadLetters.map(\.name)) == Set(Self.services.map { "surge.deadletter.\($0.consumerGroup)" }))
    }

    @Test("scripts/lib.sh starts every service on its registry port")
    func scripts() throws {
        let lib = try Self.read("scripts/lib.sh")
        let listed = try #require(lib.firstMatch(of: /SERVICES=\(([a-z ]+)\)/)).1.split(separator: " ").map(String.init)
        #expect(Set(listed) == Set(Self.services.map(\.rawValue)), "scripts/lib.sh: SERVICES must list every registry service")
        #expect(listed.last == SurgeService.gateway.rawValue, "scripts/lib.sh: the gateway starts last, once its upstreams listen")
        for service in Self.services {
            #expect(lib.contains("\(service.rawValue)) echo \(service.entry.port)"), "scripts/lib.sh: port_of \(service.rawValue)")
        }
    }

    @Test("docker-compose.yml runs every service with its role, port and health check, and the gateway waits for them")
    func compose() throws {
        let compose = try Self.read("docker-compose.yml")
        let example = try Self.read("deploy/compose.env.example")
        for service in Self.services {
            let name = service.rawValue
            let block = try #require(Self.block(named: name, in: compose), "docker-compose.yml: no `\(name):` service")
            #expect(block.contains("command: [\"\(service.executable)\"]"), "docker-compose.yml: \(name) runs \(service.executable)")
            #expect(block.contains("HTTP_PORT: \"\(service.entry.port)\""), "docker-compose.yml: \(name) listens on \(service.entry.port)")
            #expect(block.contains("postgres://surge_\(service.schema):"), "docker-compose.yml: \(name) connects as surge_\(service.schema)")
            let password = "SURGE_DB_PASSWORD_\(name.uppercased())"
            #expect(compose.contains("\(password): ${\(password):?"), "docker-compose.yml: db-init provisions \(password)")
            #expect(example.contains("\(password)=change-me"), "deploy/compose.env.example: \(password)")
        }
        let gateway = try #require(Self.block(named: "gateway", in: compose))
        for service in Self.services where service != .gateway {
            #expect(gateway.contains("      \(service.rawValue):\n        condition: service_healthy"), "the gateway waits for \(service.rawValue)")
        }
    }

    @Test("deploy/k8s/base has a manifest per service, listed in the kustomization, behind the network policy")
    func kubernetes() throws {
        let kustomization = try Self.read("deploy/k8s/base/kustomization.yaml")
        let policy = try Self.read("deploy/k8s/base/network-policy.yaml")
        let secrets = try Self.read("deploy/k8s/secret.example.yaml")
        for service in Self.services {
            let name = service.rawValue
            let manifest = try Self.read("deploy/k8s/base/\(name).yaml")
            #expect(kustomization.contains("  - \(name).yaml"), "deploy/k8s/base/kustomization.yaml lists \(name).yaml")
            #expect(manifest.contains("command: [\"\(service.executable)\"]"))
            #expect(manifest.contains("containerPort: \(service.entry.port)"), "deploy/k8s/base/\(name).yaml: containerPort")
            #expect(manifest.contains("value: \"\(service.entry.port)\""), "deploy/k8s/base/\(name).yaml: HTTP_PORT")
            #expect(manifest.contains("postgres://surge_\(service.schema):"), "deploy/k8s/base/\(name).yaml: its own database role")
            #expect(secrets.contains("SURGE_DB_PASSWORD_\(name.uppercased()):"), "deploy/k8s/secret.example.yaml: its password")
            if service != .gateway {
                #expect(policy.contains("- \(service.executable)\n"), "deploy/k8s/base/network-policy.yaml admits only the gateway to \(name)")
            }
        }
        let exposed = try #require(try Self.read("Dockerfile").firstMatch(of: /EXPOSE ([0-9 ]+)/)).1.split(separator: " ").compactMap { Int($0) }
        #expect(Set(exposed) == Set(Self.services.map(\.entry.port)), "Dockerfile: EXPOSE every registry port")
        let products = try #require(try Self.read("Dockerfile").firstMatch(of: /ARG PRODUCTS="([a-z -]+)"/)).1.split(separator: " ").map(String.init)
        #expect(Set(products) == Set(Self.services.map(\.executable) + ["surge-admin"]), "Dockerfile: the services and surge-admin, nothing else")
    }

    @Test("the README lists every service with its port, and every service's own settings")
    func readme() throws {
        let readme = try Self.read("README.md")
        for service in Self.services {
            #expect(readme.contains("| `\(service.executable)` | \(service.entry.port) |"), "README.md: the table of what runs")
            for variable in service.entry.variables {
                #expect(readme.contains("`\(variable)`"), "README.md: the configuration table documents \(variable)")
            }
        }
    }

    @Test("each service reads only the settings the registry lists for it")
    func variablesAreRegistered() throws {
        for service in SurgeService.allCases {
            let folder = Self.root.appendingPathComponent("Services/\(service.rawValue.capitalized)/Sources")
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            var read: Set<String> = []
            for file in files where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                for match in text.matches(of: /reader\.[a-zA-Z]+\("([A-Z0-9_]+)"/) { read.insert(String(match.1)) }
            }
            #expect(read.isSubset(of: Set(service.entry.variables)), "\(service.rawValue) reads \(read.subtracting(service.entry.variables).sorted()): add them to its registry entry")
        }
    }

    /// Variables a Kubernetes manifest sets only to build another one (`DATABASE_URL` from `$(DATABASE_HOST)` and the
    /// password), or that only a Job reads (the surge-topics Job's replication factor and partitions): no service reads
    /// them.
    static let kubernetesPlumbing: Set<String> = [
        "DATABASE_PASSWORD", "DATABASE_HOST", "DATABASE_PORT", "DATABASE_NAME", "DATABASE_SSLMODE", "KAFKA_TOPIC_REPLICATION_FACTOR",
        "KAFKA_TOPIC_PARTITIONS",
    ]

    @Test("README's configuration table, docker-compose.yml and deploy/k8s agree on every service's environment variables")
    func environmentAgrees() throws {
        let (shared, own) = try Self.documentedVariables()
        let runtime = try Self.sources(under: "Shared/Runtime")
        // Documented shared settings are read by the shared runtime, and every setting it reads is documented
        // (SURGE_PORT_FILE: the test harness's, never set by a deployment).
        for variable in shared {
            #expect(runtime.contains("\"\(variable)\""), "README.md documents \(variable) as a shared setting, but Shared/Runtime never reads it")
        }
        let read = Set(runtime.matches(of: /reader\.[a-zA-Z]+\("([A-Z0-9_]+)"/).map { String($0.1) }).subtracting(["SURGE_PORT_FILE"])
        #expect(read.isSubset(of: shared), "README.md: the configuration table does not document \(read.subtracting(shared).sorted())")

        let compose = try Self.read("docker-compose.yml")
        let sharedCompose = Self.keys(in: try #require(Self.section(after: "x-surge-env: &surge-env\n", in: compose)), indent: 2)
        let configMap = Self.keys(in: try Self.read("deploy/k8s/base/config.yaml"), indent: 2)
        let secrets = try Self.read("deploy/k8s/secret.example.yaml").components(separatedBy: "\n---\n")
        func secret(_ name: String) -> Set<String> {
            secrets.first { $0.contains("\n  name: \(name)\n") }.map { Self.keys(in: $0, indent: 2) } ?? []
        }
        for service in Self.services {
            let name = service.rawValue
            // Documented for it, by service prefix, is what its registry entry lists; its own sources mention each.
            #expect(own[name, default: []] == Set(service.entry.variables), "README.md's `\(name):` rows must document exactly its registry variables: \(own[name, default: []].symmetricDifference(service.entry.variables).sorted())")
            let code = try Self.sources(under: "Services/\(name.capitalized)/Sources")
            for variable in service.entry.variables where !code.contains(variable) {
                Issue.record("\(name) documents and registers \(variable), but Services/\(name.capitalized)/Sources never mentions it")
            }
            let documented = shared.union(own[name, default: []])

            let block = try #require(Self.block(named: name, in: compose))
            let environment = try #require(Self.section(after: "    environment:\n", in: block), "docker-compose.yml: \(name) has no environment")
            var composed = Self.keys(in: environment, indent: 6)
            if environment.contains("<<: *surge-env") { composed.formUnion(sharedCompose) }
            #expect(composed.isSubset(of: documented), "docker-compose.yml: \(name) sets \(composed.subtracting(documented).sorted()), which README.md does not document for it")

            let manifest = try Self.read("deploy/k8s/base/\(name).yaml")
            let env = Set(manifest.split(separator: "\n").compactMap { $0.wholeMatch(of: /\s+- name: ([A-Z][A-Z0-9_]*)/).map { String($0.1) } })
            let deployed = configMap.union(env).union(secret("surge-shared")).union(secret("surge-\(name)")).subtracting(Self.kubernetesPlumbing)
            #expect(deployed.isSubset(of: documented), "deploy/k8s: \(name) gets \(deployed.subtracting(documented).sorted()) (base/config.yaml, base/\(name).yaml, secret.example.yaml), which README.md does not document for it")
            #expect(composed == deployed, "\(name): only in docker-compose.yml \(composed.subtracting(deployed).sorted()), only in deploy/k8s \(deployed.subtracting(composed).sorted())")
        }
    }

    /// The configuration table's variables: the shared rows', and each service's (rows starting `service:`).
    static func documentedVariables() throws -> (shared: Set<String>, own: [String: Set<String>]) {
        let readme = try read("README.md")
        let start = try #require(readme.range(of: "\n## Configuration\n"), "README.md: no Configuration section")
        let rest = readme[start.upperBound...]
        let table = rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)]
        var shared: Set<String> = [], own: [String: Set<String>] = [:]
        for line in table.split(separator: "\n") where line.hasPrefix("| ") && !line.hasPrefix("| variable") {
            let cell = line.split(separator: "|", omittingEmptySubsequences: false)[1]
            // `UPSTREAM_<SERVICE>_URL` is a family, not a variable: the backtick pattern leaves it out.
            let names = Set(cell.matches(of: /`([A-Z][A-Z0-9_]*)`/).map { String($0.1) })
            if let prefix = cell.firstMatch(of: #/^\s([a-z]+):\s/#) { own[String(prefix.1), default: []].formUnion(names) } else { shared.formUnion(names) }
        }
        return (shared, own)
    }

    /// The text after `marker`, up to the next blank line or the next line indented less than the first.
    static func section(after marker: String, in text: String) -> String? {
        guard let start = text.range(of: marker) else { return nil }
        let rest = text[start.upperBound...]
        let indent = rest.prefix { $0 == " " }.count
        var lines: [Substring] = []
        for line in rest.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty || line.prefix { $0 == " " }.count < indent { break }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    /// `KEY:` mapping keys (upper case, as environment variables are) at exactly this indentation.
    static func keys(in text: String, indent: Int) -> Set<String> {
        Set(text.split(separator: "\n").compactMap { line -> String? in
            guard line.prefix(while: { $0 == " " }).count == indent, let match = line.firstMatch(of: /^ *([A-Z][A-Z0-9_]*):/) else { return nil }
            return String(match.1)
        })
    }

    /// Every Swift file's text under a folder, concatenated.
    static func sources(under path: String) throws -> String {
        let files = FileManager.default.enumerator(at: root.appendingPathComponent(path), includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        return try files.filter { $0.pathExtension == "swift" }.map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
    }

    /// The lines of a top-level compose service, up to the next one.
    static func block(named name: String, in compose: String) -> String? {
        guard let start = compose.range(of: "\n  \(name):\n") else { return nil }
        let rest = compose[start.upperBound...]
        let end = rest.range(of: #"\n  [a-z-]+:\n|\n[a-z]"#, options: .regularExpression)?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }
}
