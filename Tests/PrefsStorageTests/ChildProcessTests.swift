import Foundation
import Testing
import TestSupport

@Suite("The tests' child processes")
struct ChildProcessTests {
    @Test("Sending to a child that has exited fails quietly: the test process is not ended by SIGPIPE")
    func sendingToAnExitedChildIsHarmless() throws {
        let child = try ChildProcess("/bin/true", [])
        #expect(child.wait() == 0)
        child.send("anything")
        child.sendBytes(Array("more".utf8))
        // Reaching this point is what the test proves: before, the first send ended the whole test run.
        #expect(child.readAllOutput().isEmpty)
    }
}
