import GatewayService
import SurgeRuntime

await ServiceMain.run(.gateway, build: GatewayService.buildApplication)
