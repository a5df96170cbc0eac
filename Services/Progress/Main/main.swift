import ProgressService
import SurgeRuntime

await ServiceMain.run(.progress, build: ProgressService.buildApplication)
