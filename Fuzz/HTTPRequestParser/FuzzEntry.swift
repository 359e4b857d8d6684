// libFuzzer entry point for the HTTP upgrade parser and the handshake check.
//
// Besides looking for crashes under AddressSanitizer, it checks one property:
// feeding the input whole and feeding it in two pieces (split where the first byte
// says) must give the same result, since the network may cut a request anywhere.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let limits = HTTPLimits(maxHeadBytes: 2048, maxHeaderCount: 32, maxBodyBytes: 4096, maxListElements: 16)

    var whole = HTTPRequestParser(limits: limits)
    let wholeResult = whole.feed(bytes)

    var split = HTTPRequestParser(limits: limits)
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    var splitResult = split.feed(Array(bytes[..<cut]))
    switch splitResult {
    case .needMore:
        splitResult = split.feed(Array(bytes[cut...]))
    case .request(let request, let remainder):
        // Done after the first piece: the second piece simply follows the remainder.
        splitResult = .request(request, remainder: remainder + bytes[cut...])
    case .failure:
        break
    }

    if wholeResult != splitResult {
        fatalError("split feeding changed the result: \(wholeResult) vs \(splitResult)")
    }
    if case .request(let request, _) = wholeResult {
        switch WebSocketHandshake.evaluate(request, limits: limits) {
        case .accept(let response): precondition(response.status == 101)
        case .reject(let response): precondition((400..<500).contains(response.status))
        case .notUpgrade: break
        }
    }
    return 0
}
