import SurgeRuntime
import TemplateService

await ServiceMain.run(.template, build: TemplateService.buildApplication)
