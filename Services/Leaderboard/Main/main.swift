import LeaderboardService
import SurgeRuntime

if CommandLine.arguments.dropFirst().first == "rebuild" {
    await ServiceMain.runCommand(.leaderboard, LeaderboardService.rebuild)
} else {
    await ServiceMain.run(.leaderboard, build: LeaderboardService.buildApplication)
}
