import ChallengesService
import SurgeRuntime

let settings = try ServiceSettings.fromEnvironment(service: ChallengesService.name, defaultPort: ChallengesService.defaultPort)
try await ChallengesService.buildApplication(settings).runService()
