import Foundation
import Testing
@testable import PrefsPropertyList
@testable import PrefsStorage
@testable import RVS_PersistentPrefs
import TestSupport

@Suite("harness share, a phone and a watch sharing one group suite")
struct HarnessShareTests {
    let sandbox = HarnessSandbox()

    func conversation() throws -> [String: PropertyListValue] {
        try #require(try sandbox.domain("group.com.example.harness", in: "GroupContainer")["Conversation"]?.dictionaryValue)
    }

    @Test("harness share starts the watch as a second process; values go both ways through the group suite")
    func phoneStartsWatch() throws {
        let run = try sandbox.run(["share", "--directory", sandbox.path])
        #expect(run.status == 0, "standard error: \(run.errors)")
        let phoneTurn = try #require(try conversation()["phoneTurn"])
        guard case .integer(let turn) = phoneTurn else { Issue.record("phoneTurn is \(phoneTurn)"); return }
        // The watch is another process: the phone's turn number is its own process ID, and the watch says so.
        #expect(run.lines.contains("watch: sees phoneSays = \"Hello from the phone\" (turn \(turn))"))
        #expect(run.lines.contains { $0.hasPrefix("phone: sees watchSays = \"Hello back from the watch\"") })
        let watchLine = try #require(run.lines.firstIndex { $0.hasPrefix("watch: sees") })
        let phoneLine = try #require(run.lines.firstIndex { $0.hasPrefix("phone: sees") })
        #expect(watchLine < phoneLine)
        #expect(try conversation() == [
            "phoneSays": .string("Hello from the phone"), "phoneTurn": .integer(turn),
            "watchSays": .string("Hello back from the watch"), "watchAnswered": .integer(turn),
        ])
    }

    @Test("--role watch and --role phone, started as two separate processes, find each other through the suite")
    func twoTerminals() throws {
        let watch = try ChildProcess("harness", ["share", "--role", "watch", "--directory", sandbox.path, "--timeout", "30"], environment: sandbox.environment)
        // The watch says it is waiting before it starts checking the suite.
        #expect(watch.readLine()?.hasPrefix("watch: waiting up to 30 seconds for the phone") == true)
        let phone = try sandbox.run(["share", "--role", "phone", "--directory", sandbox.path, "--timeout", "30"])
        #expect(phone.status == 0, "phone: \(phone.errors)")
        let watchOutput = watch.readAllOutput()
        #expect(watch.wait() == 0, "watch: \(watch.readErrors())")
        #expect(watchOutput.contains("watch: sees phoneSays = \"Hello from the phone\""))
        #expect(phone.lines.contains { $0.hasPrefix("phone: sees watchSays = \"Hello back from the watch\"") })
        let conversation = try conversation()
        #expect(conversation["watchAnswered"] == conversation["phoneTurn"])
    }

    @Test("A side run alone gives up after --timeout with one clear line and a non-zero exit")
    func aloneTimesOut() throws {
        let watch = try sandbox.run(["share", "--role", "watch", "--directory", sandbox.path, "--timeout", "0.2"])
        #expect(watch.status == 1)
        #expect(watch.errorLines.count == 1)
        #expect(watch.errorLines.first?.hasPrefix("harness share: no message from the phone within 0.2 seconds") == true)

        let phone = try sandbox.run(["share", "--role", "phone", "--directory", sandbox.path, "--timeout", "0.2"])
        #expect(phone.status == 1)
        #expect(phone.errorLines.first?.hasPrefix("harness share: no answer from the watch within 0.2 seconds") == true)
        // The phone took its unanswered message back, so that a watch started later does not answer it.
        #expect(try conversation()["phoneTurn"] == nil)
    }
}
