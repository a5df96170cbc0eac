import NotificationsService
import SurgeRuntime

let settings = try ServiceSettings.fromEnvironment(service: NotificationsService.name, defaultPort: NotificationsService.defaultPort)
try await NotificationsService.buildApplication(settings).runService()
