import BadgesService
import SurgeRuntime

let settings = try ServiceSettings.fromEnvironment(service: BadgesService.name, defaultPort: BadgesService.defaultPort)
try await BadgesService.buildApplication(settings).runService()
