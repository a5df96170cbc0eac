import IdentityService
import SurgeRuntime

let settings = try ServiceSettings.fromEnvironment(service: IdentityService.name, defaultPort: IdentityService.defaultPort)
try await IdentityService.buildApplication(settings).runService()
