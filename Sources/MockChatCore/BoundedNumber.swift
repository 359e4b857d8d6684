/// A number that came from input (a JSON body, a flag, a file), checked to be finite and
/// within its range before anything converts it.
///
/// Swift traps when a `Double` that does not fit is converted to `Int64`, and when an
/// integer conversion or arithmetic overflows. Every number a client, a flag or a file
/// supplies therefore passes through one of these checks first, and a value out of range
/// becomes an error that names the field instead of a crash.
public enum BoundedNumber {
    /// The largest instant input may name: 9999-12-31T23:59:59Z, in seconds.
    public static let latestSeconds = 253_402_300_799.0

    /// A day in seconds: the longest a command's phase, wait or budget may be asked to last.
    public static let daySeconds = 86_400.0

    /// A leap year (366 days) in seconds: the longest a run, a duration in a scenario or
    /// profile, or a clock advance may be.
    public static let yearSeconds = 366 * daySeconds

    /// `value` when it is finite and within `range`.
    public static func check(_ value: Double, _ field: String, in range: ClosedRange<Double>,
                             unit: String = "") throws(BoundedNumberError) -> Double {
        guard value.isFinite, range.contains(value) else {
            throw failure(field, value, range, unit)
        }
        return value
    }

    /// `value` when it is within `range` (any integer type, checked before it is narrowed).
    public static func check<T: BinaryInteger>(_ value: T, _ field: String, in range: ClosedRange<T>,
                                               unit: String = "") throws(BoundedNumberError) -> T {
        guard range.contains(value) else {
            throw BoundedNumberError(field: field, value: "\(value)", range: "\(range.lowerBound) to \(range.upperBound)", unit: unit,
                                     integral: true)
        }
        return value
    }

    /// `value` converted to `T` when it is finite and within `range`, rounded to the
    /// nearest integer. `range` must lie within `T`'s own range.
    public static func integer<T: FixedWidthInteger>(_ value: Double, _ field: String, in range: ClosedRange<Double>,
                                                    unit: String = "", as type: T.Type = T.self) throws(BoundedNumberError) -> T {
        let checked = try check(value, field, in: range, unit: unit).rounded()
        guard let converted = T(exactly: checked) else {
            throw failure(field, value, range, unit)
        }
        return converted
    }

    /// Seconds as whole milliseconds, checked while still seconds: `range` is in seconds.
    public static func milliseconds(seconds: Double, _ field: String,
                                    in range: ClosedRange<Double>) throws(BoundedNumberError) -> Int64 {
        let checked = try check(seconds, field, in: range, unit: "seconds")
        // |range| ≤ latestSeconds keeps the product far inside Int64; a wider range is refused too.
        guard let milliseconds = Int64(exactly: (checked * 1000).rounded()) else {
            throw failure(field, seconds, range, "seconds")
        }
        return milliseconds
    }

    /// An instant given as Unix seconds, from the epoch to ``latestSeconds``.
    public static func instant(seconds: Double, _ field: String) throws(BoundedNumberError) -> Instant {
        Instant(milliseconds: try milliseconds(seconds: seconds, field, in: 0...latestSeconds))
    }

    /// An instant given as Unix milliseconds (a driver's clock), from the epoch to ``latestSeconds``.
    public static func instant(milliseconds: Int64, _ field: String) throws(BoundedNumberError) -> Instant {
        Instant(milliseconds: try check(milliseconds, field, in: 0...Int64(latestSeconds) * 1000, unit: "Unix milliseconds"))
    }

    private static func failure(_ field: String, _ value: Double, _ range: ClosedRange<Double>,
                                _ unit: String) -> BoundedNumberError {
        BoundedNumberError(field: field, value: text(value), range: text(range.lowerBound) + " to " + text(range.upperBound), unit: unit)
    }

    /// `1e+308`, `-inf`, `nan`, `30`, `0.5`: short and exact enough for a message.
    static func text(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

/// A number outside its field's range: the message names the field, the range and the value.
public struct BoundedNumberError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The field, flag or key the number came from, as the user wrote it (`'seconds'`, `--node-ttl`).
    public var field: String
    /// The value as given.
    public var value: String
    /// The accepted range, as text.
    public var range: String
    /// The unit, or empty.
    public var unit: String
    /// Whether the field takes only integers.
    public var integral = false

    public init(field: String, value: String, range: String, unit: String, integral: Bool = false) {
        (self.field, self.value, self.range, self.unit, self.integral) = (field, value, range, unit, integral)
    }

    public var description: String {
        "\(field) must be \(integral ? "an integer" : "a number") from \(range)\(unit.isEmpty ? "" : " " + unit), not \(value)"
    }
}
