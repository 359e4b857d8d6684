import ChatProtocol

/// A text frame on its way in and its JSON, parsed at most once: by the silence that
/// may hold it, the `upgrade` fault counted per device, or the decoder, whichever
/// needs it first.
struct InboundFrame {
    let bytes: UnsafeRawBufferPointer
    private var parsed: Result<JSONValue, JSONError>?

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The frame's JSON, parsed the first time it is asked for.
    mutating func json() throws(JSONError) -> JSONValue {
        if let parsed { return try parsed.get() }
        let result: Result<JSONValue, JSONError>
        do throws(JSONError) {
            result = .success(try JSONParser.parse(bytes))
        } catch {
            result = .failure(error)
        }
        parsed = result
        return try result.get()
    }

    /// The frame's JSON when it is a `login` request.
    mutating func login() -> JSONValue? {
        guard let value = try? json(), value["op"]?.stringValue == "login" else { return nil }
        return value
    }
}
