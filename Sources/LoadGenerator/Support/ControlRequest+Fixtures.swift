import ChatProtocol
import EventLoop
import WireKit

extension ControlRequest {
    /// Loads `uids` as the server's users (`POST /control/fixtures`); `completion` gets
    /// nil on success, or what went wrong.
    static func loadUsers(_ uids: [String], on loop: EventLoop, to address: SocketAddress,
                          completion: @escaping (_ problem: String?) -> Void) {
        let users = uids.map { JSONValue.object(JSONObject([("uid", .string($0))])) }
        var body: [UInt8] = []
        JSONValue.object(JSONObject([("users", .array(users))])).serialize(into: &body)
        let request = ControlRequest(method: "POST", path: "/control/fixtures", host: address.description, body: body)
        HTTPExchange.send(request, on: loop, to: address) { result in
            switch result {
            case .success(let reply) where reply.status == 200:
                completion(nil)
            case .success(let reply):
                completion("POST /control/fixtures answered \(reply.status): \(reply.text.prefix(200))")
            case .failure(let error):
                completion("POST /control/fixtures failed: \(error)")
            }
        }
    }
}
