import LeaderboardService
import SurgeRuntime

await ServiceMain.run(.leaderboard, build: LeaderboardService.buildApplication)
