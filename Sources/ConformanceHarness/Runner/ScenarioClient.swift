import ChatProtocol
import ReferenceClient

/// A scenario's `client: NAME`: the in-process reference model (``LocalClient``) or an
/// SDK instance behind a driver process (``DriverClient``). Steps and assertions go
/// through this, so the same scenario runs against either.
protocol ScenarioClient: AnyObject {
    /// Performs a call or an environment change; calls return the id their result is kept under.
    func perform(_ command: SDKCommand) throws(ScenarioError) -> CallID?
    /// A call's outcome, or nil while pending.
    func result(of call: CallID) -> CallResult?
    /// Status, background flag and logged-in user, read without counting as a call.
    func inspect() throws(ScenarioError) -> ClientState
    /// What the client reported so far, in order.
    var observations: [Observation] { get }
}

/// What `inspect` reads.
struct ClientState {
    var status: ConnectionStatus
    var backgroundTaskEnabled: Bool
    /// The logged-in user's uid.
    var loggedInUser: String?
}

/// The reference model on the scenario's own loop.
final class LocalClient: ScenarioClient {
    let sdk: SDKClient

    init(_ sdk: SDKClient) { self.sdk = sdk }

    func perform(_ command: SDKCommand) throws(ScenarioError) -> CallID? { sdk.perform(command) }

    func result(of call: CallID) -> CallResult? { sdk.result(of: call) }

    func inspect() throws(ScenarioError) -> ClientState {
        ClientState(status: sdk.status, backgroundTaskEnabled: sdk.backgroundTaskEnabled, loggedInUser: sdk.loggedInUser?.uid)
    }

    var observations: [Observation] { sdk.log.flatMap(Observation.all) }
}
