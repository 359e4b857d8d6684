import ChatProtocol
import Testing

/// The fault routes of the control API (docs/PROTOCOL.md, 12.7), as the fault tests use them.
extension ServerFixture {
    /// Sets a fault (`POST /control/faults`) and records an issue naming the server's error
    /// unless it was taken; the reply's JSON (`affected`: the connections it applies to).
    @discardableResult
    public func fault(_ body: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue? {
        let reply = try control("POST", "/control/faults", body: body)
        #expect(reply.status == 200, "\(body): \(reply.json?["error"]?.stringValue ?? "")", sourceLocation: sourceLocation)
        return reply.json
    }

    /// The faults in force (`GET /control/faults`).
    public func faults() throws -> JSONValue? {
        try control("GET", "/control/faults").json
    }

    /// Removes every fault (`DELETE /control/faults`); records an issue unless it succeeded.
    public func clearFaults(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try control("DELETE", "/control/faults").status == 200, sourceLocation: sourceLocation)
    }
}
