import Testing
import WireKit

@Suite("Control request")
struct ControlRequestTests {
    @Test func theRequestCarriesItsJSONWithItsLengthAndAsksForAClose() {
        let request = ControlRequest(method: "POST", path: "/control/clock/advance", host: "127.0.0.1:9", body: Array(#"{"ms":5}"#.utf8))
        #expect(String(decoding: request.bytes, as: UTF8.self)
                == "POST /control/clock/advance HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Type: application/json\r\n"
                + "Content-Length: 8\r\nConnection: close\r\n\r\n{\"ms\":5}")
        let empty = ControlRequest(method: "GET", path: "/control/health", host: "h")
        #expect(String(decoding: empty.bytes, as: UTF8.self).hasSuffix("Content-Length: 0\r\nConnection: close\r\n\r\n"))
    }
}
