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

    @Test("deploy/k8s has a manifest per service, listed in the kustomization, behind the network policy")
    func kubernetes() throws {
        let kustomization = try Self.read("deploy/k8s/kustomization.yaml")
        let policy = try Self.read("deploy/k8s/network-policy.yaml")
        let secrets = try Self.read("deploy/k8s/secret.example.yaml")
        for service in Self.services {
            let name = service.rawValue
            let manifest = try Self.read("deploy/k8s/\(name).yaml")
            #expect(kustomization.contains("  - \(name).yaml"), "deploy/k8s/kustomization.yaml lists \(name).yaml")
            #expect(manifest.contains("command: [\"\(service.executable)\"]"))
            #expect(manifest.contains("containerPort: \(service.entry.port)"), "deploy/k8s/\(name).yaml: containerPort")
            #expect(manifest.contains("value: \"\(service.entry.port)\""), "deploy/k8s/\(name).yaml: HTTP_PORT")
            #expect(manifest.contains("postgres://surge_\(service.schema):"), "deploy/k8s/\(name).yaml: its own database role")
            #expect(secrets.contains("SURGE_DB_PASSWORD_\(name.uppercased()):"), "deploy/k8s/secret.example.yaml: its password")
            if service != .gateway {
                #expect(policy.contains("- \(service.executable)\n"), "deploy/k8s/network-policy.yaml admits only the gateway to \(name)")
            }
        }
        let exposed = try #require(try Self.read("Dockerfile").firstMatch(of: /EXPOSE ([0-9 ]+)/)).1.split(separator: " ").compactMap { Int($0) }
        #expect(Set(exposed) == Set(Self.services.map(\.entry.port)), "Dockerfile: EXPOSE every registry port")
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

    /// The lines of a top-level compose service, up to the next one.
    static func block(named name: String, in compose: String) -> String? {
        guard let start = compose.range(of: "\n  \(name):\n") else { return nil }
        let rest = compose[start.upperBound...]
        let end = rest.range(of: #"\n  [a-z-]+:\n|\n[a-z]"#, options: .regularExpression)?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }
}
