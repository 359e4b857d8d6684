import ChatProtocol
import EventLoop
import WireKit

extension WireRunner {
    /// What a control request may change, read in process before and after it: the
    /// clock, the sessions, who is online, the faults in force, the app settings and the users.
    func controlState() -> [String] {
        let reads = ["/control/clock", "/control/connections", "/control/presence", "/control/faults"].map { path in
            let reply = server.control(HTTPRequest(method: "GET", target: path, version: "HTTP/1.1", headers: [], body: []))
            return path + " " + String(decoding: reply.body, as: UTF8.self)
        }
        return reads + ["settings " + server.engine.settings.json.description,
                        "users " + (server.engine.directory.json["users"]?.description ?? "")]
    }

    /// A control request on a fresh connection: it must get a 2xx or a 4xx, the server
    /// must end the connection after it, and a 4xx must change nothing. After a request
    /// that did something, the server is reset and the control client logged in again,
    /// so that the next input finds it as the first did.
    func runControl(_ input: WireInput) -> [String] {
        let before = controlState()
        guard let client = connect() else { return ["cannot connect to the server"] }
        defer { client.close(); loop.settle() }
        guard deliver(input.bytes, to: client, oneByteAtATime: input.oneByteAtATime) else { return ["the loop did not settle"] }
        var problems: [String] = []
        if let malformed = client.stream.malformed { problems.append("malformed answer: \(malformed)") }
        guard let response = client.stream.response else {
            return problems + ["no response (\(client.ended ? "closed" : "still open"))"]
        }
        let body = String(decoding: response.body.prefix(120), as: UTF8.self)
        if !(200..<500).contains(response.status) { problems.append("answered \(response.status) \(body)") }
        if !client.ended { problems.append("kept the connection open after \(response.status)") }
        if (400..<500).contains(response.status) {
            let after = controlState()
            for (old, new) in zip(before, after) where old != new {
                problems.append("a \(response.status) (\(body)) changed \(old.prefix { $0 != " " }): \(old.prefix(160)) became \(new.prefix(160))")
            }
        } else if !problems.isEmpty || (200..<300).contains(response.status) {
            problems += restore()
        }
        return problems
    }

    /// Clears faults, resets the server and logs the control client in again.
    private func restore() -> [String] {
        for (method, path) in [("DELETE", "/control/faults"), ("POST", "/control/reset")] {
            _ = server.control(HTTPRequest(method: method, target: path, version: "HTTP/1.1", headers: [], body: []))
        }
        loop.settle()
        return restartControl().map { ["after the request: \($0)"] } ?? []
    }
}
