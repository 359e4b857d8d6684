import ChatProtocol
import EventLoop

/// One HTTP request to the server's control API over a plain TCP connection.
enum ControlRequest {
    /// Sends `method path` with a JSON body and reads the response until the server
    /// closes the connection; `completion` gets the status and body, once, on the loop.
    static func send(on loop: EventLoop, to address: SocketAddress, method: String, path: String, body: [UInt8],
                     completion: @escaping (Result<(status: Int, body: String), UVError>) -> Void) {
        TCPConnection.connect(on: loop, to: address) { result in
            switch result {
            case .failure(let error):
                completion(.failure(error))
            case .success(let connection):
                var response: [UInt8] = []
                var done = false
                func finish() {
                    guard !done else { return }
                    done = true
                    connection.close()
                    let text = String(decoding: response, as: UTF8.self)
                    let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
                    let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
                    completion(.success((status, body)))
                }
                connection.onRead = { response.append(contentsOf: $0) }
                connection.onEnd = { _ in finish() }
                let head = "\(method) \(path) HTTP/1.1\r\nHost: \(address)\r\nContent-Type: application/json\r\n"
                    + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                connection.write(Array(head.utf8) + body)
            }
        }
    }

    /// Loads `uids` as the server's users (`POST /control/fixtures`); `completion` gets
    /// nil on success, or what went wrong.
    static func loadUsers(_ uids: [String], on loop: EventLoop, to address: SocketAddress,
                          completion: @escaping (_ problem: String?) -> Void) {
        let users = uids.map { JSONValue.object(JSONObject([("uid", .string($0))])) }
        var body: [UInt8] = []
        JSONValue.object(JSONObject([("users", .array(users))])).serialize(into: &body)
        send(on: loop, to: address, method: "POST", path: "/control/fixtures", body: body) { result in
            switch result {
            case .success(let response) where response.status == 200:
                completion(nil)
            case .success(let response):
                completion("POST /control/fixtures answered \(response.status): \(response.body.prefix(200))")
            case .failure(let error):
                completion("POST /control/fixtures failed: \(error)")
            }
        }
    }
}
