import NotificationsService
import SurgeRuntime

await ServiceMain.run(.notifications, build: NotificationsService.buildApplication)
