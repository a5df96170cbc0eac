import Foundation
import JWTKit
import NotificationsDomain
import SurgeContracts
import SurgeRuntime

/// The push channels' settings. A provider with no credentials at all is off; one with some but not all of them is a
/// configuration error, so a typo does not silently switch push off.
struct PushSettings: Sendable {
    var interval: Duration
    /// Pushes in flight at once per replica (one request each: FCM HTTP v1 and APNs send one message per request).
    var concurrency: Int
    /// A PEM file of certificates trusted beside the system's for the provider endpoints (a private relay, a test double).
    var extraTrustRoots: String?
    var retry: RetryPolicy
    var fcm: FCMChannel.Settings?
    var apns: APNsChannel.Settings?

    static func from(_ reader: EnvironmentReader) throws -> PushSettings {
        PushSettings(
            interval: .milliseconds(try reader.int("PUSH_INTERVAL_MS", default: 1000, range: 10...60_000)),
            concurrency: try reader.int("PUSH_CONCURRENCY", default: 64, range: 1...1000),
            extraTrustRoots: try readableFile(reader, "PUSH_CA_FILE"),
            retry: RetryPolicy(
                maxAttempts: try reader.int("PUSH_MAX_ATTEMPTS", default: 8, range: 1...50),
                baseDelay: TimeInterval(try reader.int("PUSH_RETRY_BASE_MS", default: 2000, range: 10...600_000)) / 1000,
                maxDelay: 30 * 60,
                giveUpAfter: TimeInterval(try reader.int("PUSH_GIVE_UP_AFTER_SECONDS", default: 86_400, range: 1...604_800))),
            fcm: try fcm(reader), apns: try apns(reader))
    }

    /// A Google service-account key (the JSON file the console gives), as a path or as the JSON itself.
    private struct ServiceAccount: Decodable {
        var project_id: String?
        var client_email: String
        var private_key_id: String?
        var private_key: String
        var token_uri: String?
    }

    private static func fcm(_ reader: EnvironmentReader) throws -> FCMChannel.Settings? {
        guard let json = try secret(reader, value: "FCM_CREDENTIALS", file: "FCM_CREDENTIALS_FILE") else { return nil }
        let account: ServiceAccount
        do {
            account = try SurgeJSON.decode(ServiceAccount.self, from: Data(json.utf8))
        } catch {
            throw ConfigurationError(variable: "FCM_CREDENTIALS", problem: "is not a service-account key (client_email, private_key)")
        }
        guard let projectID = reader.string("FCM_PROJECT_ID") ?? account.project_id else {
            throw ConfigurationError(variable: "FCM_PROJECT_ID", problem: "is required when the service-account key names no project_id")
        }
        let settings = FCMChannel.Settings(
            endpoint: try url(reader, "FCM_ENDPOINT", default: "https://fcm.googleapis.com"), projectID: projectID, clientEmail: account.client_email,
            privateKeyID: account.private_key_id, privateKeyPEM: account.private_key,
            tokenURI: try url(reader, "FCM_TOKEN_URI", default: account.token_uri ?? "https://oauth2.googleapis.com/token"))
        do {
            _ = try ServiceAccountAssertion(settings: settings)
        } catch {
            throw ConfigurationError(variable: "FCM_CREDENTIALS", problem: "has a private_key that is not an RSA private key in PEM")
        }
        return settings
    }

    private static func apns(_ reader: EnvironmentReader) throws -> APNsChannel.Settings? {
        let key = try secret(reader, value: "APNS_KEY", file: "APNS_KEY_FILE")
        let keyID = reader.string("APNS_KEY_ID"), teamID = reader.string("APNS_TEAM_ID"), topic = reader.string("APNS_TOPIC")
        if key == nil && keyID == nil && teamID == nil && topic == nil { return nil }
        guard let key else { throw ConfigurationError(variable: "APNS_KEY_FILE", problem: "or APNS_KEY is required to send to APNs") }
        let settings = APNsChannel.Settings(
            endpoint: try url(reader, "APNS_ENDPOINT", default: "https://api.push.apple.com"), topic: try reader.required("APNS_TOPIC"),
            teamID: try reader.required("APNS_TEAM_ID"), keyID: try reader.required("APNS_KEY_ID"), privateKeyPEM: key)
        do {
            _ = try ES256PrivateKey(pem: key)
        } catch {
            throw ConfigurationError(variable: "APNS_KEY_FILE", problem: "is not a P-256 private key in PEM (the .p8 file Apple gives)")
        }
        return settings
    }

    /// A secret given as a value or as a file holding it; both at once is ambiguous.
    private static func secret(_ reader: EnvironmentReader, value: String, file: String) throws -> String? {
        switch (reader.string(value), reader.string(file)) {
        case (nil, nil): return nil
        case (let text?, nil): return text
        case (nil, let path?):
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw ConfigurationError(variable: file, problem: "cannot read \(path)") }
            return text
        case (_?, _?): throw ConfigurationError(variable: file, problem: "and \(value) are both set: give one")
        }
    }

    private static func readableFile(_ reader: EnvironmentReader, _ name: String) throws -> String? {
        guard let path = reader.string(name) else { return nil }
        guard FileManager.default.isReadableFile(atPath: path) else { throw ConfigurationError(variable: name, problem: "cannot read \(path)") }
        return path
    }

    private static func url(_ reader: EnvironmentReader, _ name: String, default fallback: String) throws -> String {
        let text = reader.string(name, default: fallback)
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme), url.host != nil else {
            throw ConfigurationError(variable: name, problem: "must be an http(s) URL")
        }
        return text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}
