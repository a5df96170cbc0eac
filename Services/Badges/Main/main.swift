import BadgesService
import SurgeRuntime

await ServiceMain.run(.badges, build: BadgesService.buildApplication)
