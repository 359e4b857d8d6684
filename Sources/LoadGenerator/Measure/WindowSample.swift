import ChatProtocol
import MockChatCore

/// Counters read at the start or the end of a measurement window.
public struct WindowSample: Sendable {
    public var time: UInt64
    public var host: HostCPUSample?
    public var serverCPU: Double?
    /// CPU seconds of this process and its worker processes, summed.
    public var generatorCPU: Double?

    /// Reads the clock, the host's CPU counters, and the CPU time of the server processes
    /// (a cluster's nodes) and of the generator: this process and the `workers` it started
    /// (which must still be running; a worker started after the window's first sample
    /// counts from zero there).
    public static func take(servers: [ProcessProbe], workers: [ProcessProbe] = []) -> WindowSample {
        WindowSample(time: MonotonicTime.now(), host: HostCPUSample.now(), serverCPU: servers.total { $0.cpuSeconds() },
                     generatorCPU: ([.current] + workers).total { $0.cpuSeconds() })
    }
}

/// What happened to the machine between two samples.
public struct MeasuredWindow: Sendable {
    public var start: WindowSample
    public var end: WindowSample

    public init(start: WindowSample, end: WindowSample) {
        self.start = start
        self.end = end
    }

    public var seconds: Double { MonotonicTime.seconds(from: start.time, to: end.time) }

    public var stealPercent: Double? {
        guard let a = start.host, let b = end.host else { return nil }
        return a.stealPercent(until: b)
    }

    public var hostBusyPercent: Double? {
        guard let a = start.host, let b = end.host else { return nil }
        return a.busyPercent(until: b)
    }

    public var serverCPUSeconds: Double? {
        guard let a = start.serverCPU, let b = end.serverCPU else { return nil }
        return b - a
    }

    /// The generator's CPU time over the window, its worker processes included.
    public var generatorCPUSeconds: Double? {
        guard let a = start.generatorCPU, let b = end.generatorCPU else { return nil }
        return b - a
    }

    /// Percent of one core a CPU-seconds figure amounts to over the window.
    public func corePercent(_ cpuSeconds: Double?) -> Double? {
        guard let cpuSeconds, seconds > 0 else { return nil }
        return cpuSeconds / seconds * 100
    }

    /// The `host` section every report ends with.
    public var hostSection: BenchReport.Section {
        BenchReport.Section("host", "Host during the measured window", [
            .init("windowSeconds", .figure(seconds, places: 3), "window", unit: "s"),
            .init("stealPercent", .figure(stealPercent, places: 2), "steal", unit: "%"),
            .init("busyPercent", .figure(hostBusyPercent, places: 1), "all cores busy", unit: "%"),
            .init("serverCPUSeconds", .figure(serverCPUSeconds, places: 3), "server CPU", unit: "s"),
            .init("serverCorePercent", .figure(corePercent(serverCPUSeconds), places: 1), "server load", unit: "% of a core"),
            .init("generatorCPUSeconds", .figure(generatorCPUSeconds, places: 3), "generator CPU", unit: "s"),
            .init("generatorCorePercent", .figure(corePercent(generatorCPUSeconds), places: 1), "generator load",
                  unit: "% of a core"),
        ])
    }
}
