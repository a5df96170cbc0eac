import ChallengesService
import SurgeRuntime

await ServiceMain.run(.challenges, build: ChallengesService.buildApplication)
