import CLibUV

/// A libuv status code with the call that returned it.
public struct UVError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The negative libuv status, e.g. `UV_ECONNREFUSED`.
    public var status: Int32
    /// The libuv function that failed.
    public var call: String

    public init(_ status: Int32, _ call: String) {
        self.status = status
        self.call = call
    }

    /// The libuv error name, e.g. "ECONNREFUSED".
    public var name: String { String(cString: uv_err_name(status)) }

    public var description: String { "\(call): \(name) (\(String(cString: uv_strerror(status))))" }
}
