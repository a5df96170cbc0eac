import Foundation
import Hummingbird
import NIOCore
import NIOFoundationCompat
import ProgressDomain
import SurgeContracts
import SurgeRuntime

struct PhotoView: Codable, Sendable {
    var photoID: UUID
    var userID: UUID
    var attemptID: UUID
    var challengeID: UUID
    var localDate: LocalDate
    var taskID: String
    var contentType: String
    var size: Int
    var url: String
    var createdAt: Date
}

extension PhotoView {
    init(_ row: PhotoRow) {
        self.init(
            photoID: row.photoID, userID: row.userID, attemptID: row.attemptID, challengeID: row.challengeID, localDate: row.localDate,
            taskID: row.taskID, contentType: row.contentType, size: row.size, url: "/v1/photos/\(row.photoID.key)", createdAt: row.createdAt)
    }
}

/// Check-ins (ticks, logged amounts and their removal, photos) and the photo galleries.
struct CheckInsController {
    let checkIns: CheckInHandler
    let photos: PhotoGallery
    let maxPhotoBytes: Int

    struct TaskRequest: Codable, Sendable {
        var done: Bool
        /// When it happened on the device; the local day is derived from it. Defaults to now.
        var happenedAt: Date?
        /// The local day, when the client states it rather than derive it from happenedAt.
        var date: LocalDate?
        /// A client-made id: a retried request with the same id has no second effect.
        var checkInID: UUID?
    }

    struct LogRequest: Codable, Sendable {
        var quantity: Double
        /// 001's series number (defaults to the reps logged).
        var series: Int?
        var happenedAt: Date?
        var date: LocalDate?
        var checkInID: UUID?
    }

    struct LogResponse: ResponseCodable {
        var logID: UUID
        var attempt: AttemptView
    }

    struct PhotoResponse: ResponseCodable {
        var photoID: UUID
        var attempt: AttemptView
    }

    func addRoutes(to router: Router<SurgeRequestContext>) {
        router.add(ProgressAPI.setTask) { request, context in
            let body = try await request.decode(as: TaskRequest.self, context: context)
            let command = CheckInCommand(
                checkInID: body.checkInID ?? UUID(), taskID: try Self.taskID(request, context), kind: .setDone(body.done),
                happenedAt: body.happenedAt, date: body.date)
            return AttemptResponse(attempt: AttemptView(try await checkIns.checkIn(
                command, attemptID: try request.uuidParameter("attemptID", context: context), userID: try context.caller(), trace: context.trace)))
        }
        router.add(ProgressAPI.logQuantity) { request, context in
            let body = try await request.decode(as: LogRequest.self, context: context)
            let logID = body.checkInID ?? UUID()
            let command = CheckInCommand(
                checkInID: logID, taskID: try Self.taskID(request, context), kind: .log(quantity: body.quantity, series: body.series),
                happenedAt: body.happenedAt, date: body.date)
            let snapshot = try await checkIns.checkIn(
                command, attemptID: try request.uuidParameter("attemptID", context: context), userID: try context.caller(), trace: context.trace)
            return EditedResponse(status: .created, response: LogResponse(logID: logID, attempt: AttemptView(snapshot)))
        }
        router.add(ProgressAPI.removeLog) { request, context in
            let command = CheckInCommand(
                checkInID: UUID(), taskID: "", kind: .removeLog(try request.uuidParameter("logID", context: context)), happenedAt: nil, date: nil)
            return AttemptResponse(attempt: AttemptView(try await checkIns.checkIn(
                command, attemptID: try request.uuidParameter("attemptID", context: context), userID: try context.caller(), trace: context.trace)))
        }
        router.add(ProgressAPI.attachPhoto) { request, context in
            var request = request
            let contentType = try PhotoRules.validate(Data(), contentType: request.headers[.contentType], maxBytes: .max, allowEmpty: true)
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: maxPhotoBytes)
            } catch let error as HTTPError where error.status == .contentTooLarge {
                throw Problem.tooLarge(limit: maxPhotoBytes)
            }
            let data = Data(buffer: body)
            _ = try PhotoRules.validate(data, contentType: contentType, maxBytes: maxPhotoBytes)
            let query = request.uri.queryParameters
            var happenedAt: Date?
            if let text = query["happenedAt"].map(String.init) {
                guard let instant = Timestamp.parse(text) else { throw Problem.validation(field: "happenedAt", "must be an RFC 3339 timestamp") }
                happenedAt = instant
            }
            var date: LocalDate?
            if let text = query["date"].map(String.init) {
                guard let day = LocalDate(text) else { throw Problem.validation(field: "date", "must be YYYY-MM-DD") }
                date = day
            }
            let (snapshot, photoID) = try await checkIns.attachPhoto(
                data, contentType: contentType, taskID: try Self.taskID(request, context),
                attemptID: try request.uuidParameter("attemptID", context: context), userID: try context.caller(), happenedAt: happenedAt,
                date: date, trace: context.trace)
            return PhotoResponse(photoID: photoID, attempt: AttemptView(snapshot))
        }
        router.add(ProgressAPI.attemptPhotos) { request, context in
            try await photos.page(
                attemptID: try request.uuidParameter("attemptID", context: context), viewer: try context.caller(), page: try PageRequest(request))
        }
        router.add(ProgressAPI.challengePhotos) { request, context in
            try await photos.page(
                challengeID: try request.uuidParameter("challengeID", context: context), viewer: try context.caller(), page: try PageRequest(request))
        }
        router.add(ProgressAPI.getPhoto) { request, context in
            let photo = try await photos.photo(try request.uuidParameter("photoID", context: context), viewer: try context.caller())
            return Response(
                status: .ok,
                headers: [.contentType: photo.contentType, .contentLength: String(photo.data.count), .cacheControl: "private, max-age=86400"],
                body: .init(byteBuffer: ByteBuffer(data: photo.data)))
        }
    }

    static func taskID(_ request: Request, _ context: SurgeRequestContext) throws -> String {
        guard let taskID = context.parameters.get("taskID"), !taskID.isEmpty else { throw Problem.notFound() }
        return taskID
    }
}
