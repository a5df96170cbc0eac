import ProgressService
import SurgeRuntime

let settings = try ServiceSettings.fromEnvironment(service: ProgressService.name, defaultPort: ProgressService.defaultPort)
try await ProgressService.buildApplication(settings).runService()
