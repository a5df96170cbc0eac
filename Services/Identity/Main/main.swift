import IdentityService
import SurgeRuntime

await ServiceMain.run(.identity, build: IdentityService.buildApplication)
