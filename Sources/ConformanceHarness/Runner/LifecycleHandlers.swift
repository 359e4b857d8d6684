/// The app's lifecycle handlers, as UIKit runs them.
///
/// 002 (Step 3) has the app call `configureServices(.willResignActive)` from its
/// will-resign-active handler and `configureServices(.didBackground)` from its
/// did-enter-background handler. A scenario writes such a call as the step right after
/// the lifecycle step it belongs to (`a.didBackground`, then
/// `a.configureServices: didBackground`). UIKit posts the lifecycle notification around
/// the same time as it calls the app delegate's handler, so an SDK cannot count on either
/// order; the runner delivers the handler's call first, and the SDK sees the documented
/// usage whichever it observes first (docs/CONFORMANCE.md, rule
/// `background.services-handler-call`). A call separated from the event by any other
/// step is a later configuration and keeps its place.
enum LifecycleHandlers {
    /// The steps in the order they reach the clients: each handler call moved before the
    /// lifecycle step it follows. Step numbers are unchanged.
    static func deliveryOrder(_ steps: [Step]) -> [Step] {
        var ordered = steps
        var index = 0
        while index + 1 < ordered.count {
            if isHandler(ordered[index + 1], of: ordered[index]) {
                ordered.swapAt(index, index + 1)
                index += 2
            } else {
                index += 1
            }
        }
        return ordered
    }

    /// Whether `call` is `configureServices(<event>)` on the client that `event` happened to.
    static func isHandler(_ call: Step, of event: Step) -> Bool {
        guard case .call(let client, let method, _, _) = event.action,
              method == "willResignActive" || method == "didBackground",
              case .call(client, "configureServices", let argument, _) = call.action else { return false }
        return argument.stringValue == method
    }
}
