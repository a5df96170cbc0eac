import BadgesService
import Foundation
import SurgeRuntime

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "dry-run" {
    guard arguments.count == 2 else {
        print("usage: surge-badges dry-run <catalogue.json>")
        exit(64)
    }
    await ServiceMain.runCommand(.badges) { settings in try await BadgesService.dryRun(settings, catalogueFile: arguments[1]) }
} else if arguments.first == "rebuild" {
    await ServiceMain.runCommand(.badges, BadgesService.rebuild)
} else {
    await ServiceMain.run(.badges, build: BadgesService.buildApplication)
}
