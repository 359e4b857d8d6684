// libFuzzer entry point for the JSON parser and the protocol message decoder.
//
// Besides crashes, it checks that every parsed value serializes to text that parses
// back to the same value, and that decoding is total: each input is a request or a
// rejection carrying an error code.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    switch RequestDecoder.decode(bytes) {
    case .success(let envelope):
        let again = RequestDecoder.decode(envelope.request.json(id: envelope.id))
        guard case .success(let same) = again, same == envelope else {
            fatalError("a decoded request does not survive re-encoding: \(envelope)")
        }
    case .failure(let rejection):
        precondition(!rejection.error.code.isEmpty)
    }
    if let value = try? JSONParser.parse(bytes) {
        let text = value.serialized()
        guard let reparsed = try? JSONParser.parse(text), reparsed == value else {
            fatalError("round trip changed the value of \(text)")
        }
    }
    return 0
}
