import ChatProtocol
import EventLoop
import WireKit

extension ControlRequest {
    /// Loads `uids` as the users of every server in `addresses` (`POST /control/fixtures`),
    /// one server after another; `completion` gets nil once all have them, or the first
    /// problem, naming its server.
    static func loadUsers(_ uids: [String], on loop: EventLoop, to addresses: [SocketAddress],
                          completion: @escaping (_ problem: String?) -> Void) {
        let users = uids.map { JSONValue.object(JSONObject([("uid", .string($0))])) }
        var body: [UInt8] = []
        JSONValue.object(JSONObject([("users", .array(users))])).serialize(into: &body)
        postFixtures(body, on: loop, to: addresses[...], completion: completion)
    }

    private static func postFixtures(_ body: [UInt8], on loop: EventLoop, to addresses: ArraySlice<SocketAddress>,
                                     completion: @escaping (_ problem: String?) -> Void) {
        guard let address = addresses.first else { return completion(nil) }
        let request = ControlRequest(method: "POST", path: "/control/fixtures", host: address.description, body: body)
        HTTPExchange.send(request, on: loop, to: address) { result in
            switch result {
            case .success(let reply) where reply.status == 200:
                postFixtures(body, on: loop, to: addresses.dropFirst(), completion: completion)
            case .success(let reply):
                completion("\(address): POST /control/fixtures answered \(reply.status): \(reply.text.prefix(200))")
            case .failure(let error):
                completion("\(address): POST /control/fixtures failed: \(error)")
            }
        }
    }
}
