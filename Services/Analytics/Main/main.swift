import AnalyticsService
import SurgeRuntime

if CommandLine.arguments.dropFirst().first == "rebuild" {
    await ServiceMain.runCommand(.analytics, AnalyticsService.rebuild)
} else {
    await ServiceMain.run(.analytics, build: AnalyticsService.buildApplication)
}
