// swift-tools-version:6.0
import Foundation
import PackageDescription

/// The commit stamped into the binary (`mockchat --version`, trace headers, reports):
/// MOCKCHAT_COMMIT, which the Makefile sets from git; "unknown" without it, so a source
/// tarball without git metadata still builds. (Not read from git here: SwiftPM caches
/// this manifest's result, and a commit read once would go stale.)
let buildCommit = ProcessInfo.processInfo.environment["MOCKCHAT_COMMIT"].flatMap { $0.isEmpty ? nil : $0 } ?? "unknown"

let package = Package(
    name: "MockChat",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "mockchat", targets: ["mockchat"]),
        .library(name: "MockChatServer", targets: ["MockChatServer"]),
        .library(name: "ConformanceHarness", targets: ["ConformanceHarness"]),
        // For SDK tests in Swift: a server in the test process (docs/TESTING-IN-SWIFT.md).
        .library(name: "MockChatTesting", targets: ["MockChatTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // System libraries (Debian: libuv1-dev with libhiredis-dev, libwslay-dev, libssl-dev;
        // Homebrew: libuv, hiredis, wslay, openssl@3; the macOS build is not verified).
        .systemLibrary(name: "CLibUV", pkgConfig: "libuv",
                       providers: [.apt(["libuv1-dev", "libhiredis-dev"]), .brew(["libuv", "hiredis"])]),
        .systemLibrary(name: "CWslay", providers: [.apt(["libwslay-dev"]), .brew(["wslay"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
        // Redis client for `serve --cluster` (Debian: libhiredis-dev), on libuv through its adapter.

        // Plain values every layer shares: time as `Instant`, the seeded generator; and the
        // progress line on stderr. No other I/O.
        .target(name: "MockChatCore", dependencies: ["CBuildInfo", "CSystemMemory"]),
        // The commit the binary was built from, as a C define on one file.
        .target(name: "CBuildInfo", cSettings: [.define("MOCKCHAT_COMMIT", to: "\"\(buildCommit)\"")]),
        // Wire messages, JSON coding, error and close code catalogue. No I/O.
        .target(name: "ChatProtocol"),
        // The wire as bytes, for clients: frames (broken ones too), the upgrade, HTTP
        // responses, control API requests. Sans I/O, so every client shares it without libuv.
        .target(name: "WireKit", dependencies: ["MockChatCore", "COpenSSL"]),
        // glibc's malloc_trim, so a reset can give the trace's memory back to the system
        // (nothing elsewhere); reached through MockChatCore's HostSystem.
        .target(name: "CSystemMemory"),
        // The only code that touches libuv, wslay and hiredis.
        .target(name: "EventLoop", dependencies: ["MockChatCore", "WireKit", "CLibUV", "CWslay"]),
        // The server's rules, pure: the presence engine, its inputs and actions, the device
        // policy, the users and app settings. Links no C library (no libuv, wslay, hiredis).
        .target(name: "PresenceCore", dependencies: ["MockChatCore", "ChatProtocol"]),
        // The server's runtime around PresenceCore (re-exported): sockets, control API, trace,
        // faults, cluster bridge; the fixtures and the web console compiled in by the
        // EmbedFixtures plugin.
        .target(name: "MockChatServer", dependencies: [
            "PresenceCore", "MockChatCore", "ChatProtocol", "EventLoop", .product(name: "Logging", package: "swift-log"),
        ], plugins: ["EmbedFixtures"]),
        // The documented SDK as a state machine plus a driver over a real WebSocket; the
        // profiles compiled in.
        .target(name: "ReferenceClient", dependencies: ["MockChatCore", "ChatProtocol", "EventLoop", "Yams"],
                plugins: ["EmbedFixtures"]),
        // Scenario files, runner, assertions, reporters; the catalogue and the rule book compiled in.
        .target(name: "ConformanceHarness", dependencies: [
            "MockChatCore", "CSystemMemory", "ReferenceClient", "MockChatServer", "ChatProtocol", "EventLoop", "WireKit", "Yams",
        ], plugins: ["EmbedFixtures"]),
        // `mockchat fuzz`: random histories checked against an independent model, and wire junk.
        .target(name: "ProtocolFuzzer", dependencies: [
            "MockChatCore", "ConformanceHarness", "MockChatServer", "EventLoop", "ChatProtocol", "WireKit",
        ]),
        // `mockchat scenarios from-trace` and `shrink`: recordings turned into scenarios.
        .target(name: "TraceReplay", dependencies: [
            "MockChatCore", "ConformanceHarness", "MockChatServer", "ChatProtocol",
        ]),
        // `mockchat bench`: a load generator on its own loop.
        .target(name: "LoadGenerator", dependencies: [
            "EventLoop", "WireKit", "ChatProtocol", .product(name: "Histogram", package: "hdrhistogram-swift"),
        ]),
        // An in-process server on its own thread, driven through the control API.
        .target(name: "MockChatTesting", dependencies: ["MockChatServer", "EventLoop", "ChatProtocol", "WireKit"]),
        // `mockchat matrix`: the catalogue through several SDKs, and the table of their verdicts.
        .target(name: "ConformanceMatrix", dependencies: ["MockChatCore", "ConformanceHarness", "ChatProtocol"]),
        // Fixtures/ and Console/ compiled into the targets that carry them, at build time
        // (Plugins/EmbedFixtures runs FileEmbedder), so no generated copy is kept in git.
        .executableTarget(name: "FileEmbedder"),
        .plugin(name: "EmbedFixtures", capability: .buildTool(), dependencies: ["FileEmbedder"]),
        .executableTarget(name: "mockchat", dependencies: [
            "MockChatServer", "ConformanceHarness", "ConformanceMatrix", "ProtocolFuzzer", "TraceReplay", "LoadGenerator",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // What the test targets share, as swift-nio ships NIOEmbedded: a server on a
        // virtual clock with clients, frames written by hand, package paths. A library
        // under Sources/; it reports through Swift Testing, so only test targets link it
        // (the raw client and the frame stream it shares with the fuzzer live in EventLoop
        // and WireKit, which the binary links).
        .target(name: "MockChatTestSupport", dependencies: [
            "MockChatServer", "EventLoop", "ChatProtocol", "WireKit",
        ]),

        .testTarget(name: "MockChatCoreTests", dependencies: ["MockChatCore"]),
        // The example for SDK teams: a Swift Testing suite against MockChatTesting.
        .testTarget(name: "MockChatTestingTests", dependencies: ["MockChatTesting", "WireKit"]),
        .testTarget(name: "ChatProtocolTests", dependencies: ["ChatProtocol"]),
        .testTarget(name: "WireKitTests", dependencies: ["WireKit", "MockChatCore"]),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop", "WireKit"]),
        .testTarget(name: "MockChatServerTests", dependencies: [
            "MockChatServer", "EventLoop", "ChatProtocol", "WireKit", "MockChatTestSupport",
        ]),
        .testTarget(name: "ReferenceClientTests", dependencies: ["ReferenceClient", "ChatProtocol", "MockChatTestSupport"]),
        // Fixtures/ holds scenario files the tests load by path, not resources.
        .testTarget(name: "ConformanceMatrixTests", dependencies: [
            "ConformanceMatrix", "ConformanceHarness", "ChatProtocol", "MockChatTestSupport",
        ], exclude: ["Fixtures"]),
        .testTarget(name: "ConformanceHarnessTests", dependencies: [
            "ConformanceHarness", "EventLoop", "ChatProtocol", "MockChatTestSupport",
        ], exclude: ["Fixtures"]),
        // Fixtures/ holds the misbehaving driver the tests start as a process, not resources.
        .testTarget(name: "ProtocolFuzzerTests", dependencies: [
            "ProtocolFuzzer", "ConformanceHarness", "MockChatServer", "EventLoop", "ChatProtocol", "WireKit",
            "MockChatTestSupport",
        ], exclude: ["Fixtures"]),
        .testTarget(name: "LoadGeneratorTests", dependencies: [
            "LoadGenerator", "MockChatServer", "EventLoop", "ChatProtocol", "MockChatTestSupport",
        ]),
        .testTarget(name: "TraceReplayTests", dependencies: [
            "TraceReplay", "ConformanceHarness", "MockChatServer", "EventLoop", "ChatProtocol", "MockChatTestSupport",
        ]),
    ]
)
