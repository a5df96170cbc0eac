import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A client that opens an HTTP stream and then stops reading, as a phone whose app froze would: a plain TCP socket with
/// a phone's segment size (loopback's 64 KiB segments would give the server's socket a buffer of megabytes) and a small
/// receive buffer, so that the server's writes back up after some tens of kilobytes. `drain` reads what arrived later.
public final class StalledStreamClient: @unchecked Sendable {
    private let socket: Int32

    /// Connects to 127.0.0.1:`port` and sends `GET path` with `headers`; reads nothing.
    public init(port: Int, path: String, headers: [(String, String)], receiveBuffer: Int32 = 4096) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw StalledStreamError("socket: errno \(errno)") }
        // Before connecting: the window and segment size are offered in the handshake.
        var size = receiveBuffer
        setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var segment: Int32 = 1400
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_MAXSEG, &segment, socklen_t(MemoryLayout<Int32>.size))
        guard connectLoopback(socket, port: port) else {
            close(socket)
            throw StalledStreamError("connect: errno \(errno)")
        }
        let request = (["GET \(path) HTTP/1.1", "Host: 127.0.0.1:\(port)", "Accept: text/event-stream"] + headers.map { "\($0.0): \($0.1)" })
            .joined(separator: "\r\n") + "\r\n\r\n"
        let bytes = Array(request.utf8)
        guard send(socket, bytes, bytes.count, 0) == bytes.count else {
            close(socket)
            throw StalledStreamError("send: errno \(errno)")
        }
    }

    /// Reads until the server closes the connection (true) or `timeout` passes with the connection still open (false),
    /// on a thread of its own (the reads block).
    public func drain(timeout: Duration) async -> (text: String, closedByServer: Bool) {
        let socket = self.socket
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var waitLimit = timeval(tv_sec: 0, tv_usec: 200_000)
                setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &waitLimit, socklen_t(MemoryLayout<timeval>.size))
                let deadline = ContinuousClock.now + timeout
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 65_536)
                var closed = false
                while ContinuousClock.now < deadline {
                    let count = recv(socket, &buffer, buffer.count, 0)
                    if count > 0 {
                        received += buffer[0..<count]
                    } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                        closed = true
                        break
                    }
                }
                continuation.resume(returning: (String(decoding: received, as: UTF8.self), closed))
            }
        }
    }

    deinit { close(socket) }
}

public struct StalledStreamError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Connects `socket` (AF_INET, stream) to 127.0.0.1:`port`; false with `errno` set when it could not.
public func connectLoopback(_ socket: Int32, port: Int) -> Bool {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    return connected == 0
}
