import ChatProtocol

/// One input of the campaign (wire mode, or the other ways in) and the answer it must get.
struct WireInput: Sendable {
    /// Where the bytes go.
    enum Stage: String, Sendable {
        /// On a fresh TCP connection, in place of the HTTP upgrade request.
        case handshake
        /// On a fresh connection, right after a valid upgrade.
        case frames
        /// As a text message on the long-lived session connection.
        case message
        /// As a control API request (method, path, headers and body) on a fresh connection.
        case control
        /// As the text of a recording for `scenarios from-trace`, read in process.
        case recording
        /// As the text of a scenario file, loaded (and sometimes run) in process.
        case scenario
        /// As lines from a harness to `mockchat driver`'s reference model, in process.
        case driverLine
        /// As a command line, one argument per line, parsed by `mockchat`'s commands in process.
        case flags
        /// As an SDK manifest (`--manifest`), read and, when it loads, run with a scenario in process.
        case manifest
    }

    /// What a message means, for the ``RequestOracle``.
    enum Meaning: Sendable {
        /// The bytes encode this JSON value (duplicate keys resolved: the last counts).
        case value(JSONValue)
        /// Not a request at all: `ERR_BAD_REQUEST` with `"id": null`.
        case notARequest
        /// Unknown: any documented answer will do.
        case unknown
    }

    /// The answer required.
    enum Expectation: Sendable, Equatable {
        /// An HTTP response with one of these statuses; then the server ends the
        /// stream, unless it was a 101.
        case status(Set<Int>)
        /// No answer: the request is incomplete.
        case silence
        /// One of these statuses, or no answer.
        case statusOrSilence(Set<Int>)
        /// A close frame with one of these codes, then the end of the stream.
        case close(Set<UInt16>)
        /// A pong with this payload, and the connection stays open.
        case pong([UInt8])
        /// No frame, and the connection stays open.
        case nothing
        /// One `ERR_BAD_REQUEST` reply with `"id": null`, and the connection stays open
        /// (binary frames, PROTOCOL.md §18).
        case badRequest
        /// Any well-formed answer: replies, a pong, or a close with one of these codes.
        case anyFrames(closeCodes: Set<UInt16>)
        /// The reply to a request: see ``Meaning``.
        case reply
    }

    var stage: Stage
    /// The generator's name for the case, e.g. `frames/unmasked`.
    var label: String
    /// Handshake: the request bytes. Frames: the frame bytes. Message: the text.
    var bytes: [UInt8]
    var expectation: Expectation
    var meaning = Meaning.unknown
    /// Deliver the bytes one write at a time, one byte each.
    var oneByteAtATime = false
    /// Messages: frames to split the text into (1: a single frame).
    var fragments = 1
    /// Messages: a ping frame between the first two fragments.
    var pingBetweenFragments = false
}
