@testable import ConformanceHarness
import ChatProtocol
import Testing

/// The order in which a lifecycle event and its handler's call reach the SDK (rule
/// `background.services-handler-call`).
@Suite struct LifecycleHandlersTests {
    func order(_ steps: [JSONValue]) throws -> [Int] {
        LifecycleHandlers.deliveryOrder(try ScenarioLoader.steps(steps)).map(\.number)
    }

    @Test func aHandlerCallRightAfterItsEventGoesFirst() throws {
        let steps: [JSONValue] = [
            ["client": "a"], ["a.willResignActive": [:]], ["a.configureServices": "willResignActive"],
            ["a.didBackground": [:]], ["a.configureServices": "didBackground"], ["advance": "1s"],
        ]
        #expect(try order(steps) == [1, 3, 2, 5, 4, 6])
    }

    @Test func aLaterCallOrAnotherClientsOrAnotherStateKeepsItsPlace() throws {
        let steps: [JSONValue] = [
            ["client": "a"], ["client": "b"],
            ["a.didBackground": [:]], ["advance": "1s"], ["a.configureServices": "didBackground"],
            ["a.didBackground": [:]], ["b.configureServices": "didBackground"],
            ["b.didBackground": [:]], ["b.configureServices": "willResignActive"],
        ]
        #expect(try order(steps) == [1, 2, 3, 4, 5, 6, 7, 8, 9])
    }
}
