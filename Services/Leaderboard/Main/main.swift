import LeaderboardService
import SurgeRuntime

let settings = try ServiceSettings.fromEnvironment(service: LeaderboardService.name, defaultPort: LeaderboardService.defaultPort)
try await LeaderboardService.buildApplication(settings).runService()
