import GatewayService
import SurgeRuntime

let settings = try ServiceSettings.fromEnvironment(service: GatewayService.name, defaultPort: GatewayService.defaultPort)
try await GatewayService.buildApplication(settings).runService()
